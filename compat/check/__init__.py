"""``trl-compat check``: a static proof that code uses only what the target TRL has, plus the ledger of markers.

For every Python file and notebook code cell under the given paths, every TRL import, attribute and call is held
against the target TRL release's API from the atlas (:mod:`migrations.atlas`; see :mod:`compat.check.analyze` for
exactly what is checked), so it works without that TRL installed and never imports torch, transformers or trl.
Unresolved ``# TODO(trl-compat):`` markers (:mod:`compat.markers`) are listed on every run, in Python files,
notebooks, manifests and every other file a rule may mark (shell launchers, Markdown fences, launcher configs). :func:`check_paths` is the programmatic entry; :mod:`compat.check.cli` the command line.
"""

from __future__ import annotations

import dataclasses
import io
import os
import re
import time
import tokenize
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from packaging.version import Version

from compat.markers import (
    MARKER_FILE_PATTERNS,
    MARKER_TAG,
    Marker,
    automagic_cell,
    matches_patterns,
    notebook_code_cells,
    scan_python,
    scan_text,
)

from .analyze import Checker, Problem

__all__ = ["CheckReport", "FileResult", "Problem", "Target", "check_paths", "check_source", "choose_target"]

SCHEMA = "trl-compat/check-report/1"
#: An absolute TRL import statement somewhere (`from trl...`, `import trl`, `import os, trl.x as t`, or of a checked
#: library, or `from compat.trl` / `compat.losses`); a file without one cannot reach those names (relative imports and
#: strings do not count), so it is not parsed.
_TRL_IMPORT = re.compile(r"(?:^|;)[ \t]*(?:from[ \t]+(?:trl|transformers|peft|accelerate|compat\.trl|compat\.losses)\b"
                         r"|import[ \t]+[^\n#]*\b(?:trl|transformers|peft|accelerate)\b)", re.M)
#: The packages besides TRL whose imports and calls are checked (each against its own target release).
LIBRARIES = ("transformers", "peft", "accelerate")
_PREFILTER = (b"trl", b"transformers", b"peft", b"accelerate", b"compat.losses")  # compat.trl: "trl"
_MAGIC = re.compile(r"^\s*[%!]|^\s*[\w.]+\?{1,2}\s*$")


@dataclass(frozen=True)
class Target:
    trl: str
    transformers: str | None
    source: str  # why this target: "--target-trl", "requirements.txt: trl>=1.15", ...
    peft: str | None = None
    accelerate: str | None = None

    def libraries(self) -> dict[str, str]:
        """package -> release of every library checked besides TRL."""
        return {k: v for k, v in (("transformers", self.transformers), ("peft", self.peft),
                                  ("accelerate", self.accelerate)) if v}


@dataclass
class FileResult:
    path: str
    problems: list[Problem] = field(default_factory=list)
    markers: list[Marker] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    checked: bool = False  # the API check ran (the file mentions trl and parsed)
    # why `trl` in this file is the repository's own copy, not TRL (the migrator leaves such a file alone): its TRL
    # names are not held against the target; None for a file that imports the installed TRL
    own_trl: str | None = None

    def to_json(self) -> dict:
        return {"path": self.path, "problems": [p.to_json() for p in self.problems],
                "markers": [m.to_json() for m in self.markers], "errors": list(self.errors), "own_trl": self.own_trl}


@dataclass
class CheckReport:
    target: Target
    files: list[FileResult]
    scanned: int
    seconds: float

    @property
    def problems(self) -> int:
        return sum(len(f.problems) for f in self.files)

    @property
    def markers(self) -> int:
        return sum(len(f.markers) for f in self.files)

    @property
    def errors(self) -> int:
        return sum(len(f.errors) for f in self.files)

    @property
    def exit_code(self) -> int:
        """0 clean; 1 problems or markers left; 2 a file could not be read or parsed."""
        if self.errors:
            return 2
        return 1 if self.problems or self.markers else 0

    def summary(self) -> dict:
        by_code: dict[str, int] = {}
        for f in self.files:
            for p in f.problems:
                by_code[p.code] = by_code.get(p.code, 0) + 1
        return {"scanned": self.scanned, "checked": sum(f.checked for f in self.files),
                "problems": self.problems, "markers": self.markers, "errors": self.errors,
                "files_with_problems": sum(1 for f in self.files if f.problems),
                "files_with_markers": sum(1 for f in self.files if f.markers),
                "own_trl": sum(1 for f in self.files if f.own_trl),
                "by_code": dict(sorted(by_code.items())), "seconds": round(self.seconds, 3)}

    def to_json(self) -> dict:
        from compat._version import __version__

        return {"schema": SCHEMA, "tool": {"name": "trl-compat", "version": __version__},
                "target": {"trl": self.target.trl, "transformers": self.target.transformers,
                           "peft": self.target.peft, "accelerate": self.target.accelerate,
                           "source": self.target.source},
                "files": [f.to_json() for f in self.files], "summary": self.summary()}


def choose_target(paths: Sequence[str], trl: str | None = None, transformers: str | None = None,
                  peft: str | None = None, accelerate: str | None = None) -> Target:
    """The TRL to check against: `trl` if given (any release the atlas holds), else what `compat.migrate` would
    migrate to (the repository's pins, else the newest). A pin newer than the atlas uses the atlas's newest.

    transformers, peft and accelerate: for a TRL >= 1.13, chosen as `compat.migrate` chooses them (a major `4`/`5`
    or a version given here, else the repository's pin when the TRL allows it, else the newest release it allows);
    for an older TRL, the release of its era the atlas holds (what its configs inherited from).
    ``trl="pinned"``: the newest release the repository's own `trl` pins allow, old ones included (the TRL the code
    was written for)."""
    from migrations.atlas import Atlas, AtlasError

    atlas = Atlas.load("trl")
    if trl == "pinned":
        release, note = _pinned(atlas, paths)
    elif trl:
        release, note = atlas.release(trl), "from --target-trl"
    else:
        from compat.migrate.target import detect_target

        choice = detect_target(list(paths))
        known = [r for r in atlas.releases() if Version(r) <= choice.version] or atlas.releases()[:1]
        release, note = known[-1], choice.source
        if Version(release) != choice.version:
            note += f"; {choice.version} is not in the atlas, checked against {release}"
    chosen: dict[str, str] = {}
    for library, wanted in (("transformers", transformers), ("peft", peft), ("accelerate", accelerate)):
        if Version(release) >= Version("1.13"):
            from compat.migrate.target import TargetError, detect_library_target

            try:
                pick = detect_library_target(list(paths), library, Version(release), wanted)
            except TargetError as exc:
                raise AtlasError(str(exc)) from None
            chosen[library] = Atlas.load(library).release(pick.version)
            note += f"; {library} {chosen[library]} ({pick.source})"
        elif wanted:
            chosen[library] = Atlas.load(library).release(wanted)
            note += f"; {library} {chosen[library]}: from --target-{library}"
        else:
            chosen[library] = atlas.companion_release(release, library) or ""
            note += f"; {library} {chosen[library]}: the release of its era the atlas holds"
    return Target(release, chosen["transformers"] or None, note, chosen["peft"] or None,
                  chosen["accelerate"] or None)


def _pinned(atlas, paths: Sequence[str]) -> tuple[str, str]:
    from packaging.requirements import Requirement
    from packaging.specifiers import SpecifierSet

    from compat.migrate.target import trl_pins
    from migrations.atlas import AtlasError

    spec, found = SpecifierSet(), []
    for p in paths:
        for path, line in trl_pins(p if os.path.isdir(p) else (os.path.dirname(p) or ".")):
            spec &= Requirement(line).specifier
            found.append(f"{os.path.relpath(path)}: {line}")
    if not found:
        raise AtlasError("--target-trl pinned: no `trl` requirement found in the manifests of the given paths "
                         "(requirements*.txt, pyproject.toml, setup.cfg, setup.py, environment.yml); pass a version")
    allowed = [r for r in atlas.releases() if spec.contains(r, prereleases=True)]
    if not allowed:
        raise AtlasError(f"--target-trl pinned: no TRL release in the atlas satisfies {spec} ({'; '.join(found)})")
    return allowed[-1], "the repository's own pins: " + "; ".join(dict.fromkeys(found))


def _decode(data: bytes) -> str:
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    text = data.decode(encoding)
    return text[1:] if text.startswith("\ufeff") else text


def _mask_magics(source: str) -> str | None:
    """IPython lines (`%pip`, `!ls`, `obj?`, a one-line cell's automagic `pip install x`) become `pass` so the cell
    parses with its line numbers; None for a cell magic (`%%bash`: the whole cell is not Python)."""
    if source.lstrip().startswith("%%"):
        return None
    out, continued, indent = [], False, ""
    automagic = automagic_cell(source)  # `pip install x` alone in its cell
    for line in source.splitlines():
        if continued or _MAGIC.match(line) or automagic and line.strip():
            if not continued:  # a `\` continuation line of the magic keeps the magic's own indent, not its own
                indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}pass")
            continued = line.rstrip().endswith("\\")
        else:
            out.append(line)
    return "\n".join(out)


def _notebook_module(units: list[tuple[int | None, str]]) -> tuple[str, list[tuple[int, int]]] | None:
    """All code cells joined into one module text, with (cell, first line) of each; None if no cell imports TRL."""
    parts, starts, line = [], [], 1
    for cell, source in units:
        code = _mask_magics(source)
        if code is None or cell is None:
            continue
        starts.append((cell, line))
        parts.append(code)
        line += code.count("\n") + 1
    text = "\n".join(parts)
    return (text, starts) if _TRL_IMPORT.search(text) else None


def check_source(path: str, text: str, checker: Checker) -> FileResult:
    """Problems and markers of one file's text (Python, notebook JSON, or a manifest)."""
    result = FileResult(path)
    if path.endswith(".ipynb"):
        try:
            cells = notebook_code_cells(text)
        except ValueError as exc:
            result.errors.append(f"not a readable notebook: {exc}")
            return result
        units: list[tuple[int | None, str]] = list(cells)
    elif path.endswith((".py", ".pyi")):
        units = [(None, text)]
    else:
        result.markers = scan_text(path, text)
        return result
    for cell, source in units:
        if MARKER_TAG in source:
            result.markers.extend(scan_python(source, cell=cell))
    if cell_code := _notebook_module(units) if path.endswith(".ipynb") else None:
        # cells share one namespace: check them as one module, then give each problem its cell and line
        code, starts = cell_code
        try:
            problems = checker.check(code)
        except (SyntaxError, RecursionError, MemoryError):
            pass  # a cell that does not parse: check cell by cell below
        else:
            for p in problems:
                k = max(i for i, (_, start) in enumerate(starts) if start <= p.line)
                cell, start = starts[k]
                result.problems.append(dataclasses.replace(p, line=p.line - start + 1, cell=cell))
            result.checked = True
            return result
    for cell, source in units:
        if cell is None and not _TRL_IMPORT.search(source) or not any(
                w in source for w in LIBRARIES + ("trl", "compat.losses")):
            continue
        code = _mask_magics(source) if cell is not None else source
        if code is None:
            continue
        try:
            try:
                result.problems.extend(checker.check(code, cell=cell))
            except SyntaxError:
                # a .py exported from a notebook keeps its `!pip install` / `%cd` lines: check it as a cell
                exported = _mask_magics(source) if cell is None else None
                if exported is None or exported == source:
                    raise
                result.problems.extend(checker.check(exported))
            result.checked = True
        except SyntaxError as exc:
            where = f"cell {cell}: " if cell is not None else ""
            result.errors.append(f"{where}does not parse: {exc.msg} (line {exc.lineno})")
        except (RecursionError, MemoryError):
            result.errors.append("too deeply nested to parse")
    return result


def _wanted(path: str) -> bool:
    return path.endswith((".py", ".pyi", ".ipynb")) or matches_patterns(path, MARKER_FILE_PATTERNS)


def _own_trl(path: str, real: str, text: str) -> str | None:
    """Why the `trl` this file imports is the repository's own copy (a `trl/` package or `trl.py` beside it or above
    its namespace package, on a folder the file puts on `sys.path`, or above it and defining every name it imports),
    as the migrator decides it (`compat.migrate.runner.vendored_trl`, `compat.migrate.resolution.vendored_by_sys_path`
    and `vendored_above`); None for the installed TRL."""
    from compat.migrate import resolution
    from compat.migrate.runner import vendored_trl

    copy = vendored_trl(real, text if path.endswith((".py", ".pyi")) else None)
    if copy is not None:
        return f"`trl` here is the repository's own copy ({os.path.relpath(copy, os.path.dirname(real))})"
    if path.endswith((".py", ".pyi")) and (finding := resolution.vendored_by_sys_path(real, text)
                                            or resolution.vendored_above(real, text)) is not None:
        return finding.message.removeprefix("left alone: ")
    return None


def check_paths(paths: Sequence[str], target: Target, *, exclude: Iterable[str] = (),
                on_error: Callable[[str, str], None] | None = None) -> CheckReport:
    """Check every file under `paths` (walked like `compat.migrate`: .gitignore honoured, virtualenvs skipped)."""
    from compat.migrate.textio import DecodeError, decode_manifest
    from compat.migrate.walk import iter_targets

    started = time.perf_counter()
    checker = Checker(target.trl, transformers=target.transformers, libraries=target.libraries())
    files: list[FileResult] = []
    scanned = 0
    missing: list[FileResult] = []

    def unreadable(path: str, reason: str) -> None:
        missing.append(FileResult(path, errors=[reason]))
        if on_error:
            on_error(path, reason)

    for t in iter_targets(paths, exclude=exclude, wanted=_wanted, on_error=unreadable):
        scanned += 1
        try:
            with open(t.real, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            files.append(FileResult(t.path, errors=[f"cannot read: {exc.strerror or exc}"]))
            continue
        source = t.path.endswith((".py", ".pyi", ".ipynb"))
        if source and not any(word in data for word in _PREFILTER):  # cheap prefilter: no checked package, no marker
            continue
        try:
            text = (_decode(data) if t.path.endswith((".py", ".pyi")) else data.decode("utf-8-sig") if source
                    else decode_manifest(data).text)  # a manifest as pip reads it: a UTF-16 BOM is honoured
        except (UnicodeDecodeError, SyntaxError, LookupError, DecodeError) as exc:
            files.append(FileResult(t.path, errors=[f"cannot decode: {exc}"]))
            continue
        if not source and not any(word.decode() in text for word in _PREFILTER):
            continue
        result = check_source(t.path, text, checker)
        if result.checked and (own := _own_trl(t.path, t.real, text)):
            result.own_trl = own
            result.problems = [p for p in result.problems if not (p.name == "trl" or p.name.startswith("trl."))]
        if result.problems or result.markers or result.errors or result.checked:
            files.append(result)
    files.extend(missing)
    return CheckReport(target, files, scanned, time.perf_counter() - started)
