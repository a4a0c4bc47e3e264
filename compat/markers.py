"""Find the ``# TODO(trl-compat): ...`` markers left in files: the ledger of manual steps.

One scanner for ``trl-compat check`` and ``python -m compat.migrate`` (which lists what is left after every run). In
Python it reads comment tokens only (``tokenize``), so a string that mentions the marker is not one; notebooks are
scanned cell by cell (line numbers within the cell); Markdown in its fenced code blocks only (where the migrator
writes them: above a command), so prose that names the marker is not one; any other text file (requirements,
pyproject, shell launchers, launcher YAML) line by line, for a ``#`` comment holding the marker. Cheap: a file without
the marker text is not tokenized. ``MARKER_FILE_PATTERNS`` names the files other than Python and notebooks that
rules write markers into, so the check reads every file the migrator may have marked.

A marker's rule is read from its trailing ``[rule-id]`` (the format trl-compat writes: ``# TODO(trl-compat): <summary>
[rule-id]``, at most 100 columns), a leading ``[rule-id]``, or, for markers of earlier trl-compat versions (``...
(see MIGRATION.md#anchor)``), the anchor they link to. ``Marker.message`` is the text without the rule tag.
"""

from __future__ import annotations

import fnmatch
import io
import json
import re
import tokenize
from dataclasses import dataclass

MARKER_TAG = "TODO(trl-compat)"

#: The files other than Python and notebooks that migration rules rewrite, and so may mark: every manifest rule's
#: `patterns` (dependency manifests, shell launchers and Markdown fences, accelerate / DeepSpeed launcher configs).
#: `tests/check/test_marker_files.py` holds this to the rules.
MARKER_FILE_PATTERNS = (
    "requirements*.txt", "*requirements.txt", "*-requirements-*.txt", "constraints*.txt", "requirements/*.txt",
    "requirements/*.in", "reqs/*.txt", "pyproject.toml", "setup.cfg", "setup.py", "environment.yml",
    "environment.yaml", "environment-*.yml", "environment_*.yml", "*.sh", "*.md", "*.yaml", "*.yml",
    "*ds*.json", "*deepspeed*.json", "*zero*.json", "*DS*.json", "*Zero*.json", "*.bash", "Dockerfile*",
    "*.dockerfile", "*.Dockerfile", "Containerfile*",
    ".github/workflows/*.yml", ".github/workflows/*.yaml",
)


def matches_patterns(path: str, patterns: tuple[str, ...]) -> bool:
    """Whether `path` matches one of these fnmatch globs: one without a `/` matches the base name
    (`requirements*.txt`), one with a `/` the path's trailing components (`requirements/*.txt`)."""
    parts = path.replace("\\", "/").split("/")
    for pattern in patterns:
        depth = pattern.count("/") + 1
        if len(parts) >= depth and fnmatch.fnmatch("/".join(parts[-depth:]), pattern):
            return True
    return False
_MARKER = re.compile(r"#\s*TODO\(trl-compat\):?\s*(?P<body>.*)$")
_RULE = re.compile(r"^\[(?P<rule>[A-Za-z0-9_.:-]+)\]\s*")
_TRAILING_RULE = re.compile(r"\s\[(?P<rule>[A-Za-z0-9_.:-]+)\]\s*$")
_ANCHOR = re.compile(r"#(?P<anchor>[A-Za-z0-9_-]+)\)?\s*$")


@dataclass(frozen=True)
class Marker:
    line: int  # 1-based, in the file as it is now (in the cell for notebooks)
    column: int  # 1-based column of the `#`
    rule: str | None
    message: str
    cell: int | None = None  # notebook cell index (0-based, over all cells)

    def to_json(self) -> dict:
        return {"line": self.line, "column": self.column, "rule": self.rule, "message": self.message,
                "cell": self.cell}


def _marker(comment: str, line: int, column: int, cell: int | None) -> Marker | None:
    m = _MARKER.search(comment)
    if m is None:
        return None
    body = m.group("body").strip()
    rule = None
    trailing = _TRAILING_RULE.search(body)
    if trailing is not None:
        rule, body = trailing.group("rule"), body[: trailing.start()].rstrip()
    rule_match = _RULE.match(body) if rule is None else None
    rule = rule_match.group("rule") if rule_match else rule
    if rule is None:
        anchor = _ANCHOR.search(body)
        rule = anchor.group("anchor") if anchor and "MIGRATION.md#" in body else None
    return Marker(line, column + m.start() + 1, rule, body, cell)


def scan_python(text: str, cell: int | None = None) -> list[Marker]:
    """Markers in Python source (comment tokens only); falls back to a line scan if the text does not tokenize."""
    if MARKER_TAG not in text:
        return []
    found: list[Marker] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT and MARKER_TAG in tok.string:
                marker = _marker(tok.string, tok.start[0], tok.start[1], cell)
                if marker is not None:
                    found.append(marker)
        return found
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return scan_lines(text, cell)


def scan_lines(text: str, cell: int | None = None) -> list[Marker]:
    """Markers in any text with `#` comments (manifests), one per line at most."""
    if MARKER_TAG not in text:
        return []
    found = []
    for n, line in enumerate(text.splitlines(), 1):
        if MARKER_TAG in line:
            marker = _marker(line, n, 0, cell)
            if marker is not None:
                found.append(marker)
    return found


_FENCE = re.compile(r"^\s*(```|~~~)")


def scan_markdown(text: str) -> list[Marker]:
    """Markers in Markdown: comment lines (`# TODO(trl-compat): ...`) inside fenced code blocks only."""
    if MARKER_TAG not in text:
        return []
    found = []
    fenced = False
    for n, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
        elif fenced and line.lstrip().startswith("#") and MARKER_TAG in line:
            marker = _marker(line, n, 0, None)
            if marker is not None:
                found.append(marker)
    return found


def notebook_code_cells(text: str) -> list[tuple[int, str]]:
    """(cell index, source) of every code cell of a notebook's JSON text; ValueError if it is not a notebook."""
    data = json.loads(text)
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        raise ValueError("not a notebook: no `cells` list")
    out = []
    for i, cell in enumerate(cells):
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            out.append((i, "".join(source) if isinstance(source, list) else str(source)))
    return out


#: IPython's line magics and the POSIX aliases it registers as magics (IPython 8.x `%lsmagic`; `uv`, `mamba` and
#: `micromamba` as `pip` / `conda`): with automagic on (the default), a one-line cell naming one runs it without `%`.
AUTOMAGICS = frozenset("""
    alias alias_magic autoawait autocall automagic bookmark cat cd clear colors conda config cp cpaste debug dhist
    dirs doctest_mode ed edit env gui hist history killbgscripts ldir less lf lk ll load load_ext loadpy logoff logon
    logstart logstate logstop ls lsmagic lx macro magic mamba man matplotlib micromamba mkdir more mv notebook page
    paste pastebin pdb pdef pdoc pfile pinfo pinfo2 pip popd pprint precision prun psearch psource pushd pwd pycat
    pylab qtconsole quickref recall rehashx reload_ext rep rerun reset reset_selective rm rmdir run save sc set_env
    store sx system tb time timeit unalias unload_ext uv who who_ls whos xdel xmode""".split())
_AUTOMAGIC_HEAD = re.compile(r"^\s*([A-Za-z_]\w*)(?:\s+(?=[^\s=,])|\s*$)")


def automagic_cell(source: str) -> bool:
    """True for a cell IPython runs as a line magic written without `%` (automagic, on by default): after its
    leading blank lines, one line, starting with a magic's name (`pip install -U trl`, `cd data`) and not an
    assignment (`pip = 1`), that is not Python. IPython applies automagic to one-line cells only
    (`InteractiveShell.transform_cell` prefilters a cell of a single line); elsewhere such a line is a syntax error
    there too."""
    lines = source.splitlines()
    while lines and not lines[0].strip():
        lines.pop(0)
    if len(lines) != 1:
        return False
    head = _AUTOMAGIC_HEAD.match(lines[0])
    if head is None or head.group(1) not in AUTOMAGICS:
        return False
    try:
        compile(lines[0].strip(), "<cell>", "exec", dont_inherit=True, flags=0x400)  # PyCF_ONLY_AST: no code object
    except SyntaxError:
        return True
    except (ValueError, RecursionError, MemoryError):
        return False
    return False


def scan_text(path: str, text: str) -> list[Marker]:
    """Markers in a file's text, by kind (Python, notebook, Markdown, anything else)."""
    if MARKER_TAG not in text:
        return []
    if path.endswith((".py", ".pyi")):
        return scan_python(text)
    if path.endswith(".ipynb"):
        try:
            cells = notebook_code_cells(text)
        except ValueError:
            return scan_lines(text)
        return [m for i, source in cells for m in scan_python(source, cell=i)]
    if path.endswith(".md"):
        return scan_markdown(text)
    return scan_lines(text)


def scan_file(path: str) -> list[Marker]:
    """Markers in the file at `path` as it is on disk now ([] if it cannot be read)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return []
    if data.startswith((b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")):  # a UTF-16/32 manifest (pip reads one)
        from compat.migrate.textio import manifest_text

        text = manifest_text(data)
        return scan_text(path, text) if MARKER_TAG in text else []
    if MARKER_TAG.encode() not in data:
        return []
    return scan_text(path, data.decode("utf-8", "replace"))
