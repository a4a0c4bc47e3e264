"""Bytes <-> text for the migrator, losslessly.

A Python file is decoded the way the interpreter does it (`tokenize.detect_encoding`: a UTF-8 BOM, else a PEP 263
coding cookie in the first two lines, else UTF-8), and written back in the same encoding with the same BOM. Newlines
are never translated: libcst keeps each line's own ending (CRLF, LF, mixed) and a missing final newline, so the text
the rules see is the file, character for character. Notebooks are UTF-8 (a BOM is kept). Manifests are read the way
pip reads a requirements file (`pip._internal.utils.encoding.auto_decode`): a UTF-8, UTF-16 or UTF-32 byte-order
mark decides, else UTF-8. A UTF-16 `requirements.txt` is what `pip freeze > requirements.txt` writes in Windows
PowerShell 5, and pip installs from it; it is written back in UTF-16, BOM and line endings as they were.
"""

from __future__ import annotations

import codecs
import io
import re
import tokenize
from dataclasses import dataclass

_LONE_CR = re.compile(r"\r(?!\n)")


class DecodeError(ValueError):
    """The bytes cannot be turned into text the way Python would read them."""


@dataclass(frozen=True)
class Decoded:
    """Text plus what is needed to write it back byte for byte."""

    text: str
    encoding: str  # codec name as found, e.g. "utf-8", "iso-8859-1", "utf-16-le" (a BOM-less codec name)
    bom: bool = False

    def encode(self, text: str) -> bytes:
        """`text` in the original encoding (and BOM). Raises UnicodeEncodeError when a character does not fit."""
        data = text.encode(self.encoding)
        return _BOM_OF[self.encoding] + data if self.bom else data

    @property
    def label(self) -> str:
        """How the report names the encoding: "utf-8-sig" for UTF-8 with a BOM, else the codec ("utf-16-le" has one)."""
        return "utf-8-sig" if self.bom and self.encoding == "utf-8" else self.encoding


#: Byte-order marks and the codec that reads what follows, longest first (a UTF-32-LE mark starts like UTF-16-LE's).
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"), (codecs.BOM_UTF8, "utf-8"),
         (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
_BOM_OF = {encoding: bom for bom, encoding in _BOMS}


def decode_python(data: bytes) -> Decoded:
    """Decode Python source like the interpreter: BOM, PEP 263 cookie, else UTF-8."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:  # bad cookie, or BOM with a non-UTF-8 cookie
        raise DecodeError(str(exc)) from None
    bom = encoding == "utf-8-sig"
    if bom:
        encoding, data = "utf-8", data[len(codecs.BOM_UTF8) :]
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise DecodeError(f"not valid {encoding}: {exc}") from None
    return Decoded(text, encoding, bom)


def decode_utf8(data: bytes) -> Decoded:
    """Decode a UTF-8 text file (notebook JSON, manifests), keeping a BOM if there is one."""
    bom = data.startswith(codecs.BOM_UTF8)
    if bom:
        data = data[len(codecs.BOM_UTF8) :]
    try:
        return Decoded(data.decode("utf-8"), "utf-8", bom)
    except UnicodeDecodeError as exc:
        raise DecodeError(f"not valid utf-8: {exc}") from None


def decode_manifest(data: bytes) -> Decoded:
    """Decode a manifest (requirements file, pyproject.toml, environment.yml, setup.cfg) as pip reads a requirements
    file: the byte-order mark's encoding, else UTF-8."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return Decoded(data[len(bom):].decode(encoding), encoding, True)
            except UnicodeDecodeError as exc:
                raise DecodeError(f"not valid {encoding}: {exc}") from None
    return decode_utf8(data)


def manifest_text(data: bytes) -> str:
    """A manifest's text for reading pins (never written back): `decode_manifest`, undecodable bytes replaced."""
    try:
        return decode_manifest(data).text
    except DecodeError:
        return data.decode("utf-8", "replace")


def has_lone_cr(text: str) -> bool:
    """Old-Mac line endings (a CR not followed by LF): libcst would not give them back unchanged."""
    return "\r" in text and _LONE_CR.search(text) is not None
