"""Bytes <-> text for the migrator, losslessly.

A Python file is decoded the way the interpreter does it (`tokenize.detect_encoding`: a UTF-8 BOM, else a PEP 263
coding cookie in the first two lines, else UTF-8), and written back in the same encoding with the same BOM. Newlines
are never translated: libcst keeps each line's own ending (CRLF, LF, mixed) and a missing final newline, so the text
the rules see is the file, character for character. Notebooks and manifests are UTF-8 (a BOM is kept).
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
    encoding: str  # codec name as found, e.g. "utf-8", "iso-8859-1"
    bom: bool = False

    def encode(self, text: str) -> bytes:
        """`text` in the original encoding (and BOM). Raises UnicodeEncodeError when a character does not fit."""
        data = text.encode(self.encoding)
        return codecs.BOM_UTF8 + data if self.bom else data


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


def has_lone_cr(text: str) -> bool:
    """Old-Mac line endings (a CR not followed by LF): libcst would not give them back unchanged."""
    return "\r" in text and _LONE_CR.search(text) is not None
