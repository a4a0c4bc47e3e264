"""Notebooks (`.ipynb`): the code cells through the same rules, the JSON around them untouched.

The code cells are joined into one module (so an import in cell 1 resolves a name used in cell 5), each cell behind a
marker statement `__trl_compat_cell__(i)`, with IPython syntax masked: lines starting with `%`, `!` or `?`, lines
ending in `?`, `x = !cmd` / `x = %magic` assignments (with their `\\` continuation lines), and the line of a one-line
cell that IPython runs as a magic without `%` (`pip install -U trl`: `compat.markers.automagic_cell`) become
`__trl_compat_magic__(k)` and are put back verbatim afterwards (an automagic line whose cell a rule gave more lines gets its `%`: IPython applies
automagic to one-line cells only, and `%pip install -U trl` is the magic it ran; an import a rule adds goes after the
imports of the first cell with code, `migrations.kinds.imports.import_block_end`, never above an install cell's
lines); `%%` cells are not touched at all. If the joined module
does not parse, the cells that parse on their own are joined and migrated, the others reported and left as they are.

Writing back never re-dumps the notebook: the `source` value of each *changed* cell is located in the original JSON
text and replaced in place, in the notebook's own layout (list or string, indentation, ASCII escaping). Everything
else (key order, indentation, outputs, metadata, trailing newline) stays byte-identical.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from json.decoder import scanstring

import libcst as cst

from compat.markers import automagic_cell
from migrations.base import Finding, Migration, Options

from .imports import code_imports
from .result import MigrateError, Result

#: The engine's Python path (`engine._migrate_python`), passed in by the engine: text, options, rules, path -> Result.
MigratePython = Callable[[str, Options, Sequence[Migration], str | None], Result]

CELL_MARK = "__trl_compat_cell__"
MAGIC_MARK = "__trl_compat_magic__"
_CELL_RE = re.compile(rf"^{CELL_MARK}\((\d+)\)\n", re.M)
_MAGIC_RE = re.compile(rf"^[ \t]*{MAGIC_MARK}\((\d+)\)(?:\r?\n)?", re.M)
_ASSIGN_MAGIC = re.compile(r"^[ \t]*[\w.\[\], ]+?\s*=\s*[%!]")
_WS = re.compile(r"[ \t\n\r]*")
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")


class NotebookError(ValueError):
    """The notebook's JSON is not what nbformat writes (not an object with a `cells` list)."""


# -- masking IPython syntax -----------------------------------------------------------------------------------------


def _is_magic(line: str) -> bool:
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
        return False
    return stripped[0] in "%!?" or stripped.endswith("?") or _ASSIGN_MAGIC.match(line) is not None


def is_cell_magic(source: str) -> bool:
    """A `%%` cell: the whole cell belongs to the magic (bash, writefile, timeit...), not to Python."""
    return source.lstrip().startswith("%%")


def mask(source: str) -> tuple[str, list[str]]:
    """Replace IPython-only lines by placeholder statements; returns the Python text and the lines taken out."""
    lines = source.splitlines(keepends=True)
    automagic = automagic_cell(source)  # `pip install x` alone in its cell: its one line is a magic
    out: list[str] = []
    taken: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not (_is_magic(line) or automagic and line.strip()):
            out.append(line)
            i += 1
            continue
        group = [line]
        while group[-1].rstrip("\r\n").endswith("\\") and i + len(group) < len(lines):
            group.append(lines[i + len(group)])
        i += len(group)
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        last = group[-1]
        ending = last[len(last.rstrip("\r\n")) :]
        out.append(f"{indent}{MAGIC_MARK}({len(taken)}){ending}")
        taken.append("".join(group))
    return "".join(out), taken


def _explicit_magic(line: str) -> str:
    """`pip install x` -> `%pip install x`: the line magic an automagic line runs, written out (indent kept)."""
    body = line.lstrip(" \t")
    return line[: len(line) - len(body)] + "%" + body


def unmask(text: str, taken: list[str]) -> str:
    """Put the IPython lines back; raises ValueError when a rule lost or duplicated a placeholder."""
    seen: list[int] = []

    def put_back(match: re.Match[str]) -> str:
        k = int(match.group(1))
        seen.append(k)
        return taken[k] if k < len(taken) else match.group(0)

    restored = _MAGIC_RE.sub(put_back, text)
    if sorted(seen) != list(range(len(taken))):
        raise ValueError("a rule removed or duplicated an IPython line placeholder")
    return restored


# -- the JSON: where each cell's `source` sits --------------------------------------------------------------------


def _skip_value(s: str, i: int) -> int:
    """End index of the JSON value starting at `i` (which is not whitespace)."""
    c = s[i]
    if c == '"':
        return scanstring(s, i + 1)[1]
    if c in "[{":
        close = "]" if c == "[" else "}"
        i = _WS.match(s, i + 1).end()
        if s[i] == close:
            return i + 1
        while True:
            if c == "{":
                i = _WS.match(s, scanstring(s, i + 1)[1]).end() + 1  # key, then ':'
                i = _WS.match(s, i).end()
            i = _WS.match(s, _skip_value(s, i)).end()
            if s[i] == close:
                return i + 1
            i = _WS.match(s, i + 1).end()  # ','
    m = _SCALAR.match(s, i)
    if m is None:
        raise NotebookError(f"unexpected JSON at offset {i}")
    return m.end()


def _members(s: str, i: int) -> list[tuple[str, int, int]]:
    """(key, value start, value end) of the JSON object starting at `i`."""
    out = []
    i = _WS.match(s, i + 1).end()
    if s[i] == "}":
        return out
    while True:
        key, i = scanstring(s, i + 1)
        i = _WS.match(s, _WS.match(s, i).end() + 1).end()
        end = _skip_value(s, i)
        out.append((key, i, end))
        i = _WS.match(s, end).end()
        if s[i] == "}":
            return out
        i = _WS.match(s, i + 1).end()


def _elements(s: str, i: int) -> list[tuple[int, int]]:
    out = []
    i = _WS.match(s, i + 1).end()
    if s[i] == "]":
        return out
    while True:
        end = _skip_value(s, i)
        out.append((i, end))
        i = _WS.match(s, end).end()
        if s[i] == "]":
            return out
        i = _WS.match(s, i + 1).end()


def source_spans(text: str) -> list[tuple[int, int] | None]:
    """For each cell, the (start, end) offsets of its `source` value in the JSON text (None if it has none)."""
    start = _WS.match(text).end()
    if start >= len(text) or text[start] != "{":
        raise NotebookError("not a JSON object")
    cells = [(a, b) for key, a, b in _members(text, start) if key == "cells"]
    if not cells or text[cells[-1][0]] != "[":
        raise NotebookError("no `cells` list")
    spans: list[tuple[int, int] | None] = []
    for a, _ in _elements(text, cells[-1][0]):
        found = [(x, y) for key, x, y in _members(text, a) if key == "source"] if text[a] == "{" else []
        spans.append(found[-1] if found else None)
    return spans


def _render_source(new: str, old_json: str, ensure_ascii: bool, unit: str) -> str:
    """The JSON for a cell's new `source`, in the layout of the old value."""
    if old_json.startswith('"'):
        return json.dumps(new, ensure_ascii=ensure_ascii)
    lines = new.splitlines(keepends=True)
    if not lines:
        return "[]"
    m = re.match(r"\[([ \t\r\n]*)", old_json)
    inner = m.group(1) if m and m.group(1) else None
    tail = re.search(r"([ \t\r\n]*)\]$", old_json)
    outer = tail.group(1) if tail and inner else None
    if inner is None:  # the old value was `[]`: nbformat layout one level deeper than the closing bracket
        inner, outer = "\n" + unit, "\n"
    items = ("," + inner).join(json.dumps(line, ensure_ascii=ensure_ascii) for line in lines)
    return f"[{inner}{items}{outer}]"


# -- the notebook as a whole -----------------------------------------------------------------------------------------


@dataclass
class _Cell:
    index: int
    source: str
    masked: str
    taken: list[str]


def migrate_notebook(
    text: str, *, options: Options, rules: Sequence[Migration], path: str | None, migrate_python: MigratePython
) -> Result:
    """Migrate the code cells of a notebook given as its JSON text (each cell through `migrate_python`, the engine's
    Python path); see the module docstring."""
    result = Result(text, kind="notebook")
    try:
        nb = json.loads(text)
        if isinstance(nb, dict) and isinstance(nb.get("nbformat"), int) and nb["nbformat"] < 4:
            result.errors.append(MigrateError(
                "parse", f"an nbformat {nb['nbformat']} notebook (cells under `worksheets`, code in `input`): only "
                         "nbformat 4 is migrated; convert it first (`jupyter nbconvert --to notebook --nbformat 4 "
                         "FILE`) and run again"))
            return result
        spans = source_spans(text)
        if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list) or len(spans) != len(nb["cells"]):
            raise NotebookError("no `cells` list")
    except (ValueError, IndexError) as exc:
        result.errors.append(MigrateError("parse", f"not a notebook: {exc}"))
        return result
    language = (nb.get("metadata", {}).get("kernelspec", {}) or {}).get("language", "python")
    if language not in ("python", None):
        return result

    cells: list[_Cell] = []
    unseen: list[str] = []  # code the rules never see: `%%` cells, masked IPython lines
    for i, cell in enumerate(nb["cells"]):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code" or spans[i] is None:
            continue
        src = cell.get("source", "")
        src = "".join(src) if isinstance(src, list) else src
        if not isinstance(src, str):
            continue
        if is_cell_magic(src):
            unseen.append(src)
            continue
        masked, taken = mask(src)
        cells.append(_Cell(i, src, masked, taken))
        unseen.extend(taken)

    options = _seen_elsewhere(options, path, unseen)
    run = _run_cells(cells, options, rules, path, result, migrate_python)
    if run is None:
        return result
    new_sources, findings = run
    result.findings.extend(findings)
    if not new_sources:
        return result

    ensure_ascii = not any(ord(ch) > 127 for ch in text) and bool(re.search(r"\\u(?:00[89a-fA-F]|0[1-9a-fA-F]|[1-9a-fA-F])", text))
    unit_match = re.search(r"\{\r?\n([ \t]+)\"", text)
    unit = unit_match.group(1) if unit_match else " "
    pieces: list[str] = []
    pos = 0
    for index in sorted(new_sources):
        start, end = spans[index]  # type: ignore[misc]
        pieces.append(text[pos:start])
        pieces.append(_render_source(new_sources[index], text[start:end], ensure_ascii, unit))
        pos = end
    pieces.append(text[pos:])
    new_text = "".join(pieces)
    check = json.loads(new_text)
    for index, src in new_sources.items():  # what we spliced must read back as exactly the new source
        got = check["cells"][index]["source"]
        if ("".join(got) if isinstance(got, list) else got) != src:
            result.errors.append(MigrateError("rule-output", f"cell {index} did not read back as written"))
            return result
    result.text = new_text
    return result


def _seen_elsewhere(options: Options, path: str | None, code: list[str]) -> Options:
    """`options` with the words of code the rules do not see (magics, cells left out) counted as names used from
    elsewhere (`Options.project_imports`), so that no import they use looks unused."""
    words = set(re.findall(r"\w+", "\n".join(code)))
    return options.with_imported_elsewhere(path, words) if words else options


def _run_cells(
    cells: list[_Cell], options: Options, rules: Sequence[Migration], path: str | None, result: Result,
    migrate_python: MigratePython,
) -> tuple[dict[int, str], list[Finding]] | None:
    """Migrate the cells joined; returns {cell index: new source} for changed cells and the findings."""
    joined, starts, added = _join(cells)
    sub = migrate_python(joined, options, rules, path)
    result.parsed = sub.parsed
    if any(e.kind == "parse" for e in sub.errors):
        parseable = []
        for cell in cells:
            try:
                cst.parse_module(cell.masked)
            except Exception as exc:
                line = getattr(exc, "raw_line", 0)
                result.findings.append(
                    Finding("engine", f"cell does not parse as Python ({getattr(exc, 'message', exc)}); left as is",
                            line, 0, "", "warning", False, cell.index)
                )
            else:
                parseable.append(cell)
        if len(parseable) == len(cells):  # parses alone, not together: report the joined error
            result.errors.extend(sub.errors)
            return None
        options = _seen_elsewhere(options, path, [c.source for c in cells if c not in parseable])
        cells = parseable
        joined, starts, added = _join(cells)
        sub = migrate_python(joined, options, rules, path)
        result.parsed = True
    if sub.errors:
        result.errors.extend(sub.errors)
        return None
    result.rules_applied = sub.rules_applied
    findings = [_locate(f, cells, starts) for f in sub.findings]
    installs = _install_lines(cells, options, rules, sub.text, findings)
    if installs and "dependency-manifests" not in result.rules_applied:
        result.rules_applied = [*result.rules_applied, "dependency-manifests"]
    if sub.text == joined:
        new_sources = {}
        for cell in cells:
            if cell.index in installs:
                new_sources[cell.index] = unmask(cell.masked, installs[cell.index])
        return new_sources, findings
    parts = _CELL_RE.split(sub.text)
    # parts = [text before the first marker, idx0, body0, idx1, body1, ...]
    order = [int(x) for x in parts[1::2]]
    if order != list(range(len(cells))):
        result.errors.append(MigrateError("rule-output", "a rule removed or moved a notebook cell boundary",
                                          ",".join(sub.rules_applied)))
        return None
    bodies = parts[2::2]
    bodies[0] = parts[0] + bodies[0]
    new_sources: dict[int, str] = {}
    for cell, body, was_added in zip(cells, bodies, added):
        if was_added and body.endswith("\n"):
            body = body[:-1]
        if body == cell.masked and cell.index not in installs:
            continue
        taken = installs.get(cell.index, cell.taken)
        if automagic_cell(cell.source) and len([ln for ln in body.splitlines() if ln.strip()]) > 1:
            # a rule added lines (an import) to a one-line cell IPython runs as a magic without `%`: with more lines
            # IPython no longer applies automagic there (a SyntaxError), so the line gets its `%`, the same magic
            taken = [_explicit_magic(line) for line in taken]
        try:
            new_sources[cell.index] = unmask(body, taken)
        except ValueError as exc:
            result.errors.append(MigrateError("rule-output", str(exc), ",".join(sub.rules_applied)))
            return None
    return new_sources, findings


def _install_lines(cells: list[_Cell], options: Options, rules: Sequence[Migration], migrated: str,
                   findings: list[Finding]) -> dict[int, list[str]]:
    """The notebook's install lines (`!pip install trl==0.7.4 ...`, masked from the rules) raised like a
    requirements file's by `dependency-manifests` when the run has that rule and the notebook installs trl, with
    `trl-compat` beside `trl` when the migrated code imports `compat`: {cell index: its new masked lines}, for the
    cells whose lines change; the findings are appended to `findings`."""
    rule = next((r for r in rules if r.id == "dependency-manifests"), None)
    if rule is None:
        return {}
    from migrations.v1_13.dependency_manifests import (
        _PIP_INSTALL,
        COMPAT,
        compat_version,
        floor_table,
        fork_message,
        pip_install_line,
        trl_reference,
    )

    roots = code_imports(migrated)[0]
    add = f"{COMPAT}>={compat_version()}" if {"compat", "reference_impl"} & roots else None
    table = floor_table(options)
    rewritten = {cell.index: [pip_install_line(line, table, add) for line in cell.taken] for cell in cells}
    installs_trl = any(trl for lines in rewritten.values() for _, _, trl in lines)
    if "trl" not in roots and not installs_trl:
        # a notebook without trl: its transformers / peft pins are none of TRL's business; but code a rule pointed
        # at `compat` (a transformers 5 helper) needs trl-compat installed where the notebook installs its packages
        rewritten = {cell.index: [(line, [], False) for line in cell.taken] for cell in cells}
    if add is not None and not installs_trl and not any(COMPAT in line for cell in cells for line in cell.taken):
        _add_beside_stack(cells, rewritten, add, rule, findings)
    out: dict[int, list[str]] = {}
    for cell in cells:
        for line, (_new, messages, _trl) in zip(cell.taken, rewritten[cell.index]):
            at = cell.source[: max(cell.source.find(line), 0)].count("\n") + 1
            findings.extend(Finding(rule.id, message, at, 1, rule.anchor, "info", True, cell.index)
                            for message in messages)
            install = _PIP_INSTALL.match(line)
            if install and trl_reference(re.sub(r"[\"']", " ", install.group("rest"))):
                # `%pip install git+https://github.com/lvwerra/trl.git@25fa1bd`: a fork or a fixed commit, as in the
                # manifests (a warning: the line is the notebook's install magic, no marker goes into it)
                findings.append(Finding(rule.id, fork_message(options.target_trl), at, 1, rule.anchor, "warning",
                                        False, cell.index))
        new_taken = [new for new, _messages, _trl in rewritten[cell.index]]
        if new_taken != cell.taken:
            out[cell.index] = new_taken
    return out


def _add_beside_stack(cells: list[_Cell], rewritten: dict[int, list[tuple[str, list[str], bool]]], add: str,
                      rule: Migration, findings: list[Finding]) -> None:
    """The migrated code imports `compat`, and no install line installs trl (by name) to put `trl-compat` beside:
    it joins the first install line that installs transformers / peft / accelerate / datasets (else the first install
    line), right after `pip install`; with no install line at all, the report says to install it."""
    from migrations.v1_13.dependency_manifests import _PIP_INSTALL, shell_word

    quoted = shell_word(add)
    candidates = [(cell, k) for cell in cells for k, _line in enumerate(cell.taken)
                  if _PIP_INSTALL.match(rewritten[cell.index][k][0])]
    stack = [(cell, k) for cell, k in candidates
             if re.search(r"\b(transformers|peft|accelerate|datasets)\b", rewritten[cell.index][k][0])]
    if not candidates:
        findings.append(Finding(rule.id, f"the migrated code imports compat (trl-compat's package) and the notebook "
                                f"installs nothing: install {add} where it runs", 1, 1, rule.anchor, "warning", False,
                                cells[0].index if cells else None))
        return
    cell, k = (stack or candidates)[0]
    line, messages, trl = rewritten[cell.index][k]
    m = _PIP_INSTALL.match(line)
    assert m is not None
    new = line[:m.end("head")] + f" {quoted}" + line[m.end("head"):]
    rewritten[cell.index][k] = (new, [*messages, f"added {add}: the migrated code imports compat (trl-compat's "
                                                 "package)"], trl)


def _join(cells: list[_Cell]) -> tuple[str, list[int], list[bool]]:
    """One module of all cells; returns it, the 1-based line of each cell's marker, and whether a newline was added."""
    parts: list[str] = []
    starts: list[int] = []
    added: list[bool] = []
    line = 1
    for n, cell in enumerate(cells):
        starts.append(line)
        body = cell.masked
        add = bool(body) and not body.endswith("\n")
        parts.append(f"{CELL_MARK}({n})\n{body}{chr(10) if add else ''}")
        added.append(add)
        line += 1 + body.count("\n") + add
    return "".join(parts), starts, added


def _locate(finding: Finding, cells: list[_Cell], starts: list[int]) -> Finding:
    """A finding's line in the joined module -> (cell index, line within the cell)."""
    if not finding.line or not cells:
        return finding
    n = 0
    for k, start in enumerate(starts):
        if start < finding.line:
            n = k
    return replace(finding, line=finding.line - starts[n], cell=cells[n].index)
