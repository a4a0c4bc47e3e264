"""The repository's own dependency declarations, raised to what the migrated code needs on the target TRL line.

Formats: `requirements*.txt` (and `*requirements.txt`, `constraints*.txt`; `-r`/`-c` includes, options, comments,
hashes and environment markers are kept), `pyproject.toml` (PEP 621 `[project]` dependencies and
optional-dependencies, PEP 735 `[dependency-groups]`, Poetry's `[tool.poetry]` dependencies/dev-dependencies/groups,
edited with `tomlkit`), `setup.cfg` (`install_requires`, `extras_require`), literal `install_requires` /
`extras_require` in `setup.py` (inline, or a module-level list the call names), and the `pip:` section of a conda
`environment.yml`.

In a manifest that requires `trl` (declares it, in any extra or group, installs it from a VCS/URL/path, or `-r`
includes a file that does; see `requires_trl`), wherever `trl`, `transformers`, `accelerate`, `datasets`, `peft`, `deepspeed`, `vllm` or `liger-kernel` is named, its
specifier is raised to the floor of the target line (`compat.floors`, the single source of the numbers; `trl` to the
target line itself); see `migrations.kinds.requirements` for the policy. No package is added but what the migrated
code needs (`trl-compat` once it imports `compat`; `diffusers` once it uses the diffusion trainers of `compat.trl`,
`compat._exports.NEEDS`), and the file is byte-identical outside the specifiers that changed. A pin the target cannot satisfy (`vllm==0.19.0` for TRL 1.16) is
rewritten to the supported window and reported as a warning; a changed pin on a hashed line also gets a manual
finding (the hashes must be regenerated).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import libcst as cst
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from migrations.base import Finding, ManifestMigration, RuleContext, same_marker, todo_text
from migrations.kinds.requirements import (
    PackageFloor,
    Rewrite,
    adjust,
    floors_for,
    metadata_floors,
    python_floor,
    rewrite_poetry,
    rewrite_requirement,
    runtime_floors,
    torch_below_runtime_floor,
)

#: lock files the manifests' own tools write, and the command that re-solves each
_LOCKS = {"uv.lock": "uv lock", "poetry.lock": "poetry lock", "pdm.lock": "pdm lock", "Pipfile.lock": "pipenv lock"}
_COMMENT_OR_OPTION = re.compile(r"(\s+#|\s+--?[A-Za-z]|\s*\\\s*$)")


class DependencyManifests(ManifestMigration):
    summary = "requirements/pyproject/setup.cfg/setup.py/environment.yml: raise trl and its stack to the target floors"
    triggers = ("trl", "TRL", "peft", "deepspeed", "vllm", "accelerate", "transformers", "Transformers", "datasets",
                "liger")
    patterns = ("requirements*.txt", "*requirements.txt", "*-requirements-*.txt", "constraints*.txt", "pyproject.toml",
                "setup.cfg", "setup.py", "environment.yml", "environment.yaml", "environment-*.yml",
                "environment_*.yml", "requirements/*.txt", "requirements/*.in", "reqs/*.txt")
    order = 50

    def rewrite(self, text: str, filename: str, ctx: RuleContext) -> str:
        if not requires_trl(text, filename, ctx.path):
            return text  # trlx, OpenRLHF-style trees: their transformers/accelerate pins are none of TRL's business
        table = floor_table(ctx.options)
        self.flag_trl_references(text, filename, ctx)
        if filename == "pyproject.toml":
            new = _pyproject(self, text, table, ctx)
        elif filename == "setup.cfg":
            new = _setup_cfg(self, text, table, ctx)
        elif filename == "setup.py":
            new = _setup_py(self, text, table, ctx)
        elif filename.endswith((".yml", ".yaml")):
            new = _environment_yml(self, text, table, ctx)
        else:
            new = _requirements_txt(self, text, table, ctx)
        for need in ctx.options.project_needs:
            new = self.add_requirement(new, filename, ctx, need)
        if new != text and ctx.path is not None:
            self._stale_locks(ctx)
        return new

    def _stale_locks(self, ctx: RuleContext) -> None:
        """A lock file beside a rewritten manifest still pins the old stack (`uv sync --locked` / `poetry install`
        refuse or install it; ab-10/vequinox's uv.lock at trl 0.25.1): reported, never edited (only the tool can
        re-solve it)."""
        folder = os.path.dirname(os.path.abspath(ctx.path or ""))
        for lock, command in _LOCKS.items():
            if os.path.exists(os.path.join(folder, lock)):
                ctx.report(Finding(self.id, f"{lock} still pins the stack this manifest had: re-lock ({command}) "
                                            "after the migration", 0, 0, self.anchor, "warning", False))

    def add_requirement(self, text: str, filename: str, ctx: RuleContext, need: str) -> str:
        """A requirement the run's rewritten code needs (the runner says so through `Options.project_needs`:
        `trl-compat` once code imports `compat`, `diffusers>=...` once it uses the diffusion trainers of
        `compat.trl`), beside `trl`, when this manifest declares `trl` itself but not that package: in a requirements
        file a line right after the `trl` one, in a PEP 621 array an element after it, in a Poetry table a line
        after it; elsewhere a manual step."""
        declared = _Declared()
        scratch = RuleContext()
        if filename == "pyproject.toml":
            _pyproject(self, text, declared, scratch)
        elif filename in ("setup.cfg", "setup.py") or filename.endswith((".yml", ".yaml")):
            ({"setup.cfg": _setup_cfg, "setup.py": _setup_py}.get(filename, _environment_yml))(self, text, declared,
                                                                                              scratch)
        else:
            _requirements_txt(self, text, declared, scratch)
        package = re.split(r"[<>=!~\[; ]", need, maxsplit=1)[0]
        if "trl" not in declared.names or package in declared.names:
            return text
        if package == COMPAT:
            requirement, why = f"{COMPAT}>={compat_version()}", "the migrated code imports compat (trl-compat's package)"
        else:
            requirement, why = need, f"the migrated code uses compat.trl names built on {package}"
        if filename == "pyproject.toml":
            new = _pyproject_add(text, requirement)
        elif filename.endswith((".yml", ".yaml")):
            new = _environment_yml_add(text, requirement)
        elif filename == "setup.py":
            new = _setup_py_add(text, requirement)
        elif filename == "setup.cfg":
            new = _setup_cfg_add(text, requirement)
        else:
            new = _requirements_add(text, requirement)
        if new is None:
            return self.mark_missing(text, filename, ctx, f"add {requirement} next to trl: {why}")
        line = next((n for n, ln in enumerate(new.splitlines(), 1) if requirement in ln), 0)
        ctx.report(Finding(self.id, f"added {requirement}: {why}", line, 1, self.anchor, "info", True))
        return new

    def mark_missing(self, text: str, filename: str, ctx: RuleContext, message: str) -> str:
        """A requirement that could not be written in this manifest's layout (a Poetry constraint list, a
        `setup.cfg` value on one line with others): a manual finding, with its marker on the line above the first
        one declaring trl (a comment line in every manifest format), where the file still parses with it; else at
        line 0."""
        lines = text.splitlines(keepends=True)
        at = _trl_line(text, filename)
        marker = todo_text(message, self.anchor, self.id)
        if at is not None:
            if at and same_marker(lines[at - 1], marker):
                ctx.report(Finding(self.id, message, at, 1, self.anchor, "manual", False))
                return text
            indent = re.match(r"[ \t]*", lines[at]).group(0)  # type: ignore[union-attr]
            newline = "\r\n" if lines[at].endswith("\r\n") else "\n"
            new = "".join([*lines[:at], indent + marker + newline, *lines[at:]])
            if _still_parses(new, filename):
                ctx.report(Finding(self.id, message, at + 1, 1, self.anchor, "manual", False))
                return new
        ctx.report(Finding(self.id, message, 0, 1, self.anchor, "manual", False))
        return text

    def flag_trl_references(self, text: str, filename: str, ctx: RuleContext) -> None:
        """A manual finding for every line installing `trl` from a VCS, URL, archive or path (requirements files get
        a marker above it too, in `_requirements_txt`): the fork or commit is not what the code was migrated for."""
        for n, line in enumerate(text.splitlines(), 1):
            if trl_reference(line, filename) and not line.lstrip().startswith("#"):
                ctx.report(Finding(self.id, _fork_message(ctx), n, 1, self.anchor, "manual", False))

    # -- reporting --------------------------------------------------------------------------------------------------
    def report(self, ctx: RuleContext, rw: Rewrite, line: int, *, hashed: bool = False) -> None:
        severity = "warning" if rw.outcome.unsatisfiable or any("dropped" in m for m in rw.outcome.messages) else "info"
        for message in rw.outcome.messages:
            ctx.report(Finding(self.id, message, line, 1, self.anchor, severity, True))
        if hashed:
            ctx.report(Finding(self.id, _hash_message(rw.package), line, 1, self.anchor, "manual", False))


def _python_version_file(rule: DependencyManifests, ctx: RuleContext, python: PackageFloor) -> None:
    """A `.python-version` beside a manifest whose Python range was raised (uv and pyenv pick the interpreter from
    it: gustavecortal/eliciting_emotional_reasoning's `3.10` under `requires-python = ">=3.11"` makes `uv sync`
    refuse): reported when it names a version below the floor, never edited (the interpreter is the user's)."""
    if ctx.path is None:
        return
    path = os.path.join(os.path.dirname(os.path.abspath(ctx.path)), ".python-version")
    try:
        with open(path, encoding="utf-8") as fh:
            pinned = fh.readline().strip()
    except (OSError, UnicodeDecodeError):
        return
    try:
        version = Version(pinned)
    except ValueError:
        return
    if not python.specifier.contains(version, prereleases=True) and \
            not python.specifier.contains(f"{pinned}.99", prereleases=True):
        ctx.report(Finding(rule.id, f".python-version pins Python {pinned}, below what TRL {ctx.options.target_trl} "
                                    f"requires ({python.specifier}): uv / pyenv will refuse or pick it; raise it",
                           0, 0, rule.anchor, "warning", False))


def _hash_message(package: str) -> str:
    return f"{package}: the version changed on a hashed line; regenerate its hashes (e.g. pip-compile --generate-hashes)"


def _with_needs(table: dict[str, PackageFloor], needs: tuple[str, ...]) -> dict[str, PackageFloor]:
    """The floor table raised by what the run's rewritten code needs (`peft>=0.17.0` beside the diffusion trainers):
    a pin the manifest holds below such a need is raised like a floor, else the set would not install."""
    out = dict(table)
    for need in needs:
        req = Requirement(need)
        lower = [Version(s.version) for s in req.specifier if s.operator in (">=", "==", "~=")]
        if not lower:
            continue  # trl-compat itself: added, never raised
        name, lowest = canonicalize_name(req.name), max(lower)
        why = f"the migrated code uses compat.trl names that need {need}"
        base = out.get(name)
        if base is None:
            out[name] = PackageFloor(name, req.specifier, lowest, why)
        elif lowest > base.lowest:  # the need's lower bound replaces the floor's; an upper bound (`<5`) stays
            upper = SpecifierSet(",".join(str(s) for s in base.specifier if s.operator in ("<", "<=", "!=")))
            out[name] = replace(base, specifier=upper & req.specifier, lowest=lowest, why=why)
    return out


# -- does the manifest require trl? ------------------------------------------------------------------------------

class _Declared(dict):
    """A floor table that raises nothing and records every package name the format's parser looks up: run over a
    manifest, the names it declares (the same parser decides what a requirement is, in every format)."""

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        self.names.add(key)
        return None


#: `trl` installed from a VCS, a URL, an archive or a local (editable) checkout: a fork, or a copy of some commit.
_TRL_REFERENCE = re.compile(
    r"(?:#egg=trl\b|\btrl\s*@|/trl(?:\.git)?(?:[@#/\s]|$)|/trl-\d[^/\s]*\.(?:whl|tar\.gz|zip)\b|^\s*-e\s+\.?/?trl/?\s*$)",
    re.IGNORECASE)
_INCLUDE = re.compile(r"^\s*(?:-r|--requirement)(?:\s*=\s*|\s+|(?=\S))(?P<path>\S+)")


#: The same in structured manifests (pyproject, setup.py/cfg, environment.yml): a PEP 508 direct reference
#: (`"trl @ git+https://..."`) or a Poetry table (`trl = {git = "...", rev = "..."}`); a project URL is no install.
_TRL_STRUCTURED = re.compile(r"(?:[\"'\s-]trl\s*@|^\s*[\"']?trl[\"']?\s*=\s*\{[^}]*\b(?:git|path|url)\s*=)",
                             re.IGNORECASE)


def trl_reference(line: str, filename: str = "requirements.txt") -> bool:
    """Whether a manifest line installs `trl` from a VCS, URL, archive or local path rather than the index."""
    body = line.split(" #", 1)[0]
    if filename in ("pyproject.toml", "setup.cfg", "setup.py") or filename.endswith((".yml", ".yaml")):
        return bool(_TRL_STRUCTURED.search(" " + body))
    return bool(_TRL_REFERENCE.search(body))


def requires_trl(text: str, filename: str, path: str | None = None, _seen: frozenset[str] = frozenset()) -> bool:
    """True when the manifest requires `trl`: it declares it (any format; in a pyproject or setup file, any of its
    extras or groups counts), installs it from a VCS/URL/path, or includes (`-r`) a requirements file that does.
    Only such a manifest may have other pins raised (issue 12: 6 of 8 negative controls were rewritten before)."""
    declared = _Declared()
    scratch = RuleContext()
    rule = MIGRATION
    try:
        if filename == "pyproject.toml":
            _pyproject(rule, text, declared, scratch)
        elif filename == "setup.cfg":
            _setup_cfg(rule, text, declared, scratch)
        elif filename == "setup.py":
            _setup_py(rule, text, declared, scratch)
        elif filename.endswith((".yml", ".yaml")):
            _environment_yml(rule, text, declared, scratch)
        else:
            _requirements_txt(rule, text, declared, scratch)
    except Exception:  # a file the rewriters cannot read: nothing is raised either (the engine reports parse errors)
        return False
    if any(f.severity == "manual" for f in scratch.findings):
        return True  # a file that does not parse: undecided, the rewrite runs and says its pins were not checked
    if "trl" in declared.names or any(trl_reference(line, filename) for line in text.splitlines()):
        return True
    if filename in ("pyproject.toml", "setup.cfg", "setup.py") or filename.endswith((".yml", ".yaml")):
        return False
    folder = os.path.dirname(path) if path else None
    for line in text.splitlines():
        m = _INCLUDE.match(line)
        if m is None or folder is None:
            continue
        included = os.path.normpath(os.path.join(folder, m.group("path")))
        if included in _seen or not os.path.isfile(included):
            continue
        try:
            with open(included, encoding="utf-8") as fh:
                inner = fh.read()
        except (OSError, UnicodeDecodeError):
            continue
        if requires_trl(inner, os.path.basename(included), included, _seen | {included}):
            return True
    return False


COMPAT = "trl-compat"


def compat_version() -> str:
    from compat._version import __version__

    return __version__


def _requirements_add(text: str, requirement: str) -> str | None:
    """`requirement` on a new line right after the first `trl` requirement line (None when there is none)."""
    lines = text.splitlines(keepends=True)
    for n, line in enumerate(lines):
        if not _is_requirement(line):
            continue
        declared = _Declared()
        rewrite_requirement(line[:_requirement_end(line)], declared)
        if declared.names == {"trl"}:
            at = n
            while lines[at].rstrip("\r\n").endswith("\\") and at + 1 < len(lines):
                at += 1
            newline = "\r\n" if lines[at].endswith("\r\n") else "\n"
            if not lines[at].endswith(("\n", "\r")):
                lines[at] += newline
            lines.insert(at + 1, requirement + newline)
            return "".join(lines)
    return None


#: A line declaring `trl` in some manifest format: `trl>=0.8`, `"trl==0.7.4",`, `trl = "0.7.4"`, `- trl`.
_TRL_DECLARATION = re.compile(r"""(?:^|[\s"'\[,-])trl\s*(?:[<>=!~\[;@"',]|$)""", re.IGNORECASE)


def _trl_line(text: str, filename: str) -> int | None:
    """The index of the first non-comment line declaring trl (for setup.py the line of the string literal the
    setup() call reads), or None."""
    if filename == "setup.py":
        found = _setup_trl_string(text)
        return found[1].start.line - 1 if found else None
    for n, line in enumerate(text.splitlines()):
        if not line.lstrip().startswith("#") and _TRL_DECLARATION.search(line):
            return n
    return None


def _still_parses(text: str, filename: str) -> bool:
    """Whether an edited manifest is still well formed in its format (Python and TOML are parsed; the line-based
    formats take a comment line anywhere)."""
    if filename.endswith(".py"):
        try:
            cst.parse_module(text)
        except cst.ParserSyntaxError:
            return False
    elif filename.endswith(".toml"):
        import tomlkit

        try:
            tomlkit.parse(text)
        except Exception:  # noqa: BLE001 - tomlkit raises many kinds of parse errors
            return False
    return True


def _setup_trl_string(text: str) -> tuple[cst.SimpleString, cst.metadata.CodeRange] | None:
    """The first (in source order) requirement string literal of `setup()` that declares trl, with its range."""
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError:
        return None
    finder = _SetupStrings()
    module.visit(finder)
    wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(cst.metadata.PositionProvider)
    found = []
    for node, where in positions.items():
        if id(node) not in finder.targets or not isinstance(node.evaluated_value, str):
            continue
        declared = _Declared()
        rewrite_requirement(node.evaluated_value, declared)
        if declared.names == {"trl"}:
            found.append((where.start.line, where.start.column, node, where))
    if not found:
        return None
    _, _, node, where = min(found, key=lambda f: (f[0], f[1]))
    return node, where


def _setup_py_add(text: str, requirement: str) -> str | None:
    """`requirement` as a string element right after the `trl` one of `setup()`'s requirement lists: on a line of
    its own, indented and quoted like it, where the trl string has its own line (a comma after it added if it had
    none); else `, "requirement"` right after it on its line. None when no list literal holds trl."""
    found = _setup_trl_string(text)
    if found is None:
        return None
    node, where = found
    if where.start.line != where.end.line:
        return None
    quote = node.quote if len(node.quote) == 1 else '"'
    if quote in requirement:
        return None
    element = f"{quote}{requirement}{quote}"
    lines = text.splitlines(keepends=True)
    n = where.start.line - 1
    line = lines[n]
    before, after = line[:where.start.column], line[where.end.column:]
    body_after = after.rstrip("\r\n")
    if not before.strip() and re.fullmatch(r"\s*,?\s*(#.*)?", body_after):
        newline = line[len(line.rstrip("\r\n")):] or "\n"
        if body_after.lstrip().startswith(","):
            lines.insert(n + 1, f"{before}{element},{newline}")
        else:
            lines[n] = line[:where.end.column] + "," + after
            lines.insert(n + 1, f"{before}{element}{newline}")
        if not line.endswith(("\n", "\r")):
            lines[n] += newline
    else:
        lines[n] = f"{line[:where.end.column]}, {element}{after}"
    new = "".join(lines)
    added = _setup_trl_string(new)
    return new if added is not None and _still_parses(new, "setup.py") else None


def _setup_cfg_add(text: str, requirement: str) -> str | None:
    """`requirement` on a line of its own right after the `trl` line of `[options] install_requires` or an
    `[options.extras_require]` value, indented like the value's lines. None when trl shares its line with other
    requirements or no such value declares it."""
    lines = text.splitlines(keepends=True)
    for n, value_start in _setup_cfg_values(lines):
        line = lines[n]
        segment = line[value_start:].rstrip("\r\n")
        if not _is_requirement(segment):
            continue
        declared = _Declared()
        rewrite_requirement(segment[:_requirement_end(segment)], declared)
        if declared.names != {"trl"}:
            continue
        on_key_line = value_start > 0 and not line[:value_start].isspace()
        if on_key_line and ";" in segment.split("#", 1)[0]:
            return None  # `install_requires = trl; numpy`: a one-line list, not rewritten by hand
        if on_key_line:
            following = lines[n + 1] if n + 1 < len(lines) else ""
            indent = re.match(r"[ \t]+", following).group(0) if re.match(r"[ \t]+\S", following) else "    "
        else:
            indent = re.match(r"\s*", segment).group(0)  # type: ignore[union-attr]
        newline = "\r\n" if line.endswith("\r\n") else "\n"
        if not line.endswith(("\n", "\r")):
            lines[n] = line + newline
        lines.insert(n + 1, indent + requirement + newline)
        return "".join(lines)
    return None


def _pyproject_add(text: str, requirement: str) -> str | None:
    """`requirement` after `trl` in the first PEP 621 / PEP 735 array that holds it, else in a Poetry dependency
    table (`_poetry_add`); None when neither declares trl."""
    import tomlkit

    doc = tomlkit.parse(text)
    project = doc.get("project") or {}
    arrays = [project.get("dependencies"), *(project.get("optional-dependencies") or {}).values(),
              *(doc.get("dependency-groups") or {}).values()]
    for array in arrays:
        if not isinstance(array, list):
            continue
        for index, item in enumerate(array):
            declared = _Declared()
            if isinstance(item, str):
                rewrite_requirement(str(item), declared)
            if declared.names == {"trl"}:
                array.insert(index + 1, requirement)
                return tomlkit.dumps(doc)
    return _poetry_add(text, requirement)


_POETRY_DEPENDENCIES = re.compile(r"^\[tool\.poetry\.(?:group\.[\w.-]+\.)?dependencies\]\s*$")
_POETRY_TRL = re.compile(r"^\s*[\"']?trl[\"']?\s*=")


def _poetry_add(text: str, requirement: str) -> str | None:
    """`requirement` as a `name = "constraint"` line right after the one-line `trl = ...` entry of the first Poetry
    dependency table that declares it (`[tool.poetry.dependencies]` or a group's); None when none does."""
    name, constraint = re.match(r"([A-Za-z0-9._-]+)(.*)", requirement).groups()  # type: ignore[union-attr]
    lines = text.splitlines(keepends=True)
    in_table = False
    for n, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("["):
            in_table = bool(_POETRY_DEPENDENCIES.match(stripped))
            continue
        if not (in_table and _POETRY_TRL.match(line)):
            continue
        value = line.split("=", 1)[1].split("#", 1)[0]
        if value.count("{") != value.count("}") or value.count("[") != value.count("]"):
            return None  # a multi-line inline table: not written by hand here
        newline = "\r\n" if line.endswith("\r\n") else "\n"
        if not line.endswith(("\n", "\r")):
            lines[n] += newline
        lines.insert(n + 1, f'{name} = "{constraint.strip() or "*"}"{newline}')
        return "".join(lines)
    return None


def _fork_message(ctx: RuleContext) -> str:
    return fork_message(ctx.options.target_trl)


def fork_message(target: Version) -> str:
    """What to do about `trl` installed from a VCS, URL or path, for a run targeting TRL `target`."""
    floor = floors_for(target)["trl"].lowest
    return (f"trl is installed from a VCS/URL/local path (a fork or a fixed commit): the migrated code needs "
            f"trl>={floor}; replace it with trl>={floor}, or rebase the fork on TRL {floor}")


# -- requirements.txt ---------------------------------------------------------------------------------------------

def _requirement_end(line: str) -> int:
    """Where the requirement part of a requirements.txt line ends (before a comment, an option or a backslash)."""
    m = _COMMENT_OR_OPTION.search(line)
    return m.start() if m else len(line.rstrip("\r\n"))


def _is_requirement(content: str) -> bool:
    stripped = content.strip()
    return bool(stripped) and not stripped.startswith(("#", "-", ".", "/")) and "://" not in stripped.split()[0]


def _requirements_txt(rule: DependencyManifests, text: str, table: dict[str, PackageFloor], ctx: RuleContext) -> str:
    lines = text.splitlines(keepends=True)
    out = list(lines)
    i = 0
    while i < len(lines):
        start = i
        # a logical line runs over backslash continuations (hashes usually sit there)
        while lines[i].rstrip("\r\n").endswith("\\") and i + 1 < len(lines):
            i += 1
        logical = "".join(lines[start:i + 1])
        i += 1
        first = lines[start]
        if trl_reference(first) and not first.lstrip().startswith("#"):
            marker = todo_text(_fork_message(ctx), rule.anchor, rule.id)
            if not (start and same_marker(lines[start - 1], marker)):
                newline = "\r\n" if first.endswith("\r\n") else "\n"
                out[start] = marker + newline + out[start]
            continue
        if not _is_requirement(first):
            continue
        end = _requirement_end(first)
        _torch_warning(rule, ctx, first[:end], table, start + 1)
        hashed = "--hash" in logical
        rw = rewrite_requirement(first[:end], table, hashed=hashed)
        if rw is None:
            continue
        out[start] = rw.text + first[end:]
        rule.report(ctx, rw, start + 1, hashed=hashed)
        if hashed:  # the manual step of `report` gets its marker (a comment line is fine inside --require-hashes)
            marker = todo_text(_hash_message(rw.package), rule.anchor, rule.id)
            if not (start and same_marker(lines[start - 1], marker)):
                newline = "\r\n" if first.endswith("\r\n") else "\n"
                out[start] = marker + newline + out[start]
    return "".join(out)


def _torch_warning(rule: DependencyManifests, ctx: RuleContext, req: str, table: dict[str, PackageFloor],
                   line: int) -> None:
    message = torch_below_runtime_floor(req, table.get("transformers"))
    if message is not None:
        ctx.report(Finding(rule.id, message, line, 1, rule.anchor, "warning", False))


def _poetry_pep440(constraint: str) -> str | None:
    from migrations.kinds.requirements import _poetry_to_pep440

    try:
        return _poetry_to_pep440(constraint.strip())
    except ValueError:
        return None


# -- pyproject.toml -----------------------------------------------------------------------------------------------

def _line_of(text: str, needle: str) -> int:
    pos = text.find(needle)
    return text.count("\n", 0, pos) + 1 if pos >= 0 else 0


def _pyproject(rule: DependencyManifests, text: str, table: dict[str, PackageFloor], ctx: RuleContext) -> str:
    import tomllib

    import tomlkit
    from tomlkit.items import String, StringType

    try:
        tomllib.loads(text)  # tomlkit's own errors can be misleading (a NUL byte the file does not contain)
    except tomllib.TOMLDecodeError as exc:
        ctx.report(Finding(rule.id, f"pyproject.toml is not valid TOML ({exc}): its pins were not checked; fix the file "
                                    "and run again", 0, 0, rule.anchor, "manual", False))
        return text
    doc = tomlkit.parse(text)
    changed = False

    def fix_array(array: Any) -> None:
        nonlocal changed
        if not isinstance(array, list):
            return
        for index, item in enumerate(array):
            if not isinstance(item, str):
                continue
            _torch_warning(rule, ctx, str(item), table, _line_of(text, str(item)))
            rw = rewrite_requirement(str(item), table)
            if rw is None:
                continue
            literal = isinstance(item, String) and item.type in (StringType.SLL, StringType.MLL)
            array[index] = tomlkit.string(rw.text, literal=literal)
            rule.report(ctx, rw, _line_of(text, str(item)))
            changed = True

    def fix_poetry(deps: Any) -> None:
        nonlocal changed
        if not hasattr(deps, "items"):
            return
        for name, value in list(deps.items()):
            constraint = value if isinstance(value, str) else value.get("version") if hasattr(value, "get") else None
            if _canonical(name) == "torch" and isinstance(constraint, str):
                pep = _poetry_pep440(str(constraint))
                if pep is not None:
                    _torch_warning(rule, ctx, f"torch{pep}", table, _line_of(text, f"{name}"))
            floor = table.get(_canonical(name))
            if floor is None:
                continue
            holder, key = (deps, name) if isinstance(value, str) else (value, "version")
            if not hasattr(holder, "get") or not isinstance(holder.get(key), str):
                continue
            old = holder[key]
            outcome = rewrite_poetry(str(old), floor)
            if outcome is None:
                continue
            literal = isinstance(old, String) and old.type in (StringType.SLL, StringType.MLL)
            holder[key] = tomlkit.string(outcome.new, literal=literal)
            rw = Rewrite(outcome.new, outcome, floor.package)
            rule.report(ctx, rw, _line_of(text, f"{name}"))
            changed = True

    python = python_floor(ctx.options.target_trl)

    def fix_python(holder: Any, key: str, poetry: bool) -> None:
        """`requires-python = ">=3.8"` / Poetry `python = "^3.9"`: raised to the target's Requires-Python, without
        which no resolver installs the raised trl for the project (it solves for the whole declared range)."""
        nonlocal changed
        old = holder.get(key) if hasattr(holder, "get") else None
        if python is None or not isinstance(old, str):
            return
        outcome = rewrite_poetry(str(old), python) if poetry else adjust(str(old), python)
        if outcome is None:
            return
        literal = isinstance(old, String) and old.type in (StringType.SLL, StringType.MLL)
        holder[key] = tomlkit.string(outcome.new, literal=literal)
        rule.report(ctx, Rewrite(outcome.new, outcome, "python"), _line_of(text, key))
        changed = True
        _python_version_file(rule, ctx, python)

    project = doc.get("project")
    if project is not None:
        fix_python(project, "requires-python", poetry=False)
        fix_array(project.get("dependencies"))
        for array in (project.get("optional-dependencies") or {}).values():
            fix_array(array)
    for array in (doc.get("dependency-groups") or {}).values():
        fix_array(array)
    poetry = (doc.get("tool") or {}).get("poetry")
    if poetry is not None:
        fix_python(poetry.get("dependencies"), "python", poetry=True)
        fix_poetry(poetry.get("dependencies"))
        fix_poetry(poetry.get("dev-dependencies"))
        for group in (poetry.get("group") or {}).values():
            fix_poetry(group.get("dependencies") if hasattr(group, "get") else None)
    return tomlkit.dumps(doc) if changed else text


def _canonical(name: str) -> str:
    from packaging.utils import canonicalize_name

    return canonicalize_name(name)


# -- setup.cfg ----------------------------------------------------------------------------------------------------

_SECTION = re.compile(r"^\s*\[(?P<name>[^\]]+)\]")
_KEY = re.compile(r"^(?P<key>[A-Za-z0-9_.-]+)\s*[=:]\s*(?P<value>.*)$")


def _setup_cfg_values(lines: list[str]) -> Iterator[tuple[int, int]]:
    """(line index, column where the requirement text starts) of every line of `[options] install_requires` and of
    the `[options.extras_require]` values: the key's own line from its value, each continuation line from 0."""
    section = ""
    in_value = False
    for n, line in enumerate(lines):
        body = line.rstrip("\r\n")
        m = _SECTION.match(body)
        if m:
            section, in_value = m.group("name").strip(), False
            continue
        key = _KEY.match(body)
        if key and not body[:1].isspace():
            in_value = (section == "options" and key.group("key") == "install_requires") or (
                section == "options.extras_require")
            if in_value:
                yield n, key.start("value")
        elif in_value and body[:1].isspace():
            yield n, 0
        elif body.strip() and not body[:1].isspace():
            in_value = False


def _setup_cfg(rule: DependencyManifests, text: str, table: dict[str, PackageFloor], ctx: RuleContext) -> str:
    lines = text.splitlines(keepends=True)
    for n, value_start in _setup_cfg_values(lines):
        line = lines[n]
        segment = line[value_start:]
        if not _is_requirement(segment):
            continue
        end = _requirement_end(segment)
        rw = rewrite_requirement(segment[:end], table)
        if rw is None:
            continue
        lines[n] = line[:value_start] + rw.text + segment[end:]
        rule.report(ctx, rw, n + 1)
    return "".join(lines)


# -- setup.py -----------------------------------------------------------------------------------------------------

_SETUP_KEYS = ("install_requires", "extras_require", "tests_require")


def _setup_py(rule: DependencyManifests, text: str, table: dict[str, PackageFloor], ctx: RuleContext) -> str:
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        ctx.report(Finding(rule.id, f"setup.py does not parse ({exc.message.splitlines()[0][:100]}): its pins were "
                                    "not checked; fix the file and run again", exc.raw_line, exc.raw_column + 1,
                           rule.anchor, "manual", False))
        return text
    finder = _SetupStrings()
    module.visit(finder)
    if not finder.targets:
        return text
    wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
    transformer = _SetupRewriter(rule, table, ctx, finder.targets)
    new = wrapper.visit(transformer)
    return new.code if transformer.changed else text


class _SetupStrings(cst.CSTVisitor):
    """The string literals that are requirements: in `setup(install_requires=[...], extras_require={...: [...]})`,
    directly or through a module-level `NAME = [...]` / `{...}` the call names."""

    def __init__(self) -> None:
        super().__init__()
        self.targets: set[int] = set()
        self.assigned: dict[str, cst.BaseExpression] = {}
        self.named: list[str] = []

    def visit_Module(self, node: cst.Module) -> None:
        for stmt in node.body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, (cst.Assign, cst.AnnAssign)):
                        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                        for t in targets:
                            if isinstance(t, cst.Name) and small.value is not None:
                                self.assigned[t.value] = small.value

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""
        if name != "setup":
            return
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in _SETUP_KEYS:
                self._collect(arg.value)

    def leave_Module(self, original_node: cst.Module) -> None:
        for name in self.named:
            value = self.assigned.get(name)
            if value is not None:
                self._collect(value, follow=False)

    def _collect(self, value: cst.BaseExpression, follow: bool = True) -> None:
        if isinstance(value, cst.Name) and follow:
            self.named.append(value.value)
        elif isinstance(value, (cst.List, cst.Tuple)):
            for element in value.elements:
                if isinstance(element.value, cst.SimpleString):
                    self.targets.add(id(element.value))
        elif isinstance(value, cst.Dict):
            for element in value.elements:
                if isinstance(element, cst.DictElement):
                    self._collect(element.value, follow)


class _SetupRewriter(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (cst.metadata.PositionProvider,)

    def __init__(self, rule: DependencyManifests, table: dict[str, PackageFloor], ctx: RuleContext,
                 targets: set[int]) -> None:
        super().__init__()
        self.rule, self.table, self.ctx, self.targets = rule, table, ctx, targets
        self.changed = False

    def leave_SimpleString(self, original_node: cst.SimpleString, updated_node: cst.SimpleString) -> cst.SimpleString:
        if id(original_node) not in self.targets or not isinstance(original_node.evaluated_value, str):
            return updated_node
        rw = rewrite_requirement(original_node.evaluated_value, self.table)
        if rw is None or "\\" in rw.text or original_node.quote in rw.text:
            return updated_node
        self.changed = True
        line = self.get_metadata(cst.metadata.PositionProvider, original_node).start.line
        self.rule.report(self.ctx, rw, line)
        quote = original_node.quote
        return updated_node.with_changes(value=f"{original_node.prefix}{quote}{rw.text}{quote}")


# -- conda environment.yml ----------------------------------------------------------------------------------------

_PIP_KEY = re.compile(r"^(?P<indent>\s*)-\s*pip\s*:\s*(#.*)?$")
_ITEM = re.compile(r"^(?P<indent>\s*)-\s+(?P<quote>['\"]?)(?P<req>.*?)(?P=quote)(?P<tail>\s*(#.*)?)$")


def _pip_items(lines: list[str]) -> Iterator[tuple[int, re.Match[str]]]:
    """(index, item match) of every requirement of an environment.yml's `pip:` lists (conda packages are not pip's)."""
    pip_indent: int | None = None
    for n, line in enumerate(lines):
        body = line.rstrip("\r\n")
        if not body.strip() or body.lstrip().startswith("#"):
            continue
        indent = len(body) - len(body.lstrip())
        m = _PIP_KEY.match(body)
        if m:
            pip_indent = indent
            continue
        if pip_indent is None:
            continue
        if indent <= pip_indent:
            pip_indent = None
            continue
        item = _ITEM.match(body)
        if item is None or item.group("req").startswith("-"):
            continue
        yield n, item


def _environment_yml(rule: DependencyManifests, text: str, table: dict[str, PackageFloor], ctx: RuleContext) -> str:
    lines = text.splitlines(keepends=True)
    for n, item in _pip_items(lines):
        rw = rewrite_requirement(item.group("req"), table)
        if rw is None:
            continue
        start, end = item.span("req")
        lines[n] = lines[n][:start] + rw.text + lines[n][end:]
        rule.report(ctx, rw, n + 1)
    return "".join(lines)


def _environment_yml_add(text: str, requirement: str) -> str | None:
    """`requirement` as a new item of the `pip:` list right after its `trl` item, with the same indent and dash
    (None when no pip list holds trl)."""
    lines = text.splitlines(keepends=True)
    for n, item in _pip_items(lines):
        declared = _Declared()
        rewrite_requirement(item.group("req"), declared)
        if declared.names == {"trl"}:
            line = lines[n]
            newline = "\r\n" if line.endswith("\r\n") else "\n"
            if not line.endswith(("\n", "\r")):
                lines[n] = line + newline
            lines.insert(n + 1, line[: item.start("req")] + requirement + item.group("quote") + newline)
            return "".join(lines)
    return None


MIGRATION = DependencyManifests()


# -- notebooks: `!pip install ...` lines ---------------------------------------------------------------------------

#: an install line of a notebook: `!pip install`, `%pip install`, `!python -m pip install`, `pip install` (automagic)
# `rest` runs over backslash continuations (`%pip install -q \` / `    trl==0.7.2 \` / `    transformers==4.34.1`)
_PIP_INSTALL = re.compile(r"^(?P<head>\s*[!%]?\s*(?:python3?\s+-m\s+)?pip3?\s+install\b)(?P<rest>(?:[^\n\\]|\\\r?\n)*)")
_TOKEN = re.compile(r"""(?P<q>["']?)(?P<req>[^\s"']+)(?P=q)""")
#: pip options whose next word is their value, never a requirement
_VALUED_OPTIONS = frozenset({"-r", "-c", "-e", "--requirement", "--constraint", "--editable", "-i", "--index-url",
                             "--extra-index-url", "-f", "--find-links", "-t", "--target"})


def floor_table(options) -> dict[str, PackageFloor]:  # type: ignore[no-untyped-def]
    """The floors a manifest's pins (and a notebook's install lines) are raised to, for the run's target and the
    requirements its rewritten code needs (`Options.project_needs`)."""
    table = {**metadata_floors(options.target_trl),
             **floors_for(options.target_trl, transformers=options.target("transformers"))}
    table = {**runtime_floors(table.get("transformers")), **table}
    if not options.uses_trl_vllm:  # the project's own vLLM (TRL's extra only): its pin is no business of TRL's
        table.pop("vllm", None)
    return _with_needs(table, options.project_needs)


def shell_word(requirement: str) -> str:
    """`requirement` as one word of a shell command: quoted where it holds `>` / `<` (the shell's redirections)."""
    return f'"{requirement}"' if re.search(r"[<>]", requirement) else requirement


def pip_install_line(line: str, table: dict[str, PackageFloor], add: str | None = None
                     ) -> tuple[str, list[str], bool]:
    """A notebook's install line (`!pip install -q trl==0.7.4 "transformers==4.34.0"`) with each requirement the
    manifests' rule manages raised as it raises a requirements file's (quotes, options and the rest kept), and
    `add` (`trl-compat>=X`) right after the `trl` one when given and not installed already. Returns (the line, the
    messages, whether the line installs trl). Anything else (no install line, a VCS / URL / path argument, an
    option's value) is left as it is."""
    m = _PIP_INSTALL.match(line)
    if m is None:
        return line, [], False
    rest = m.group("rest")
    messages: list[str] = []
    edits: list[tuple[int, int, str]] = []  # (start, end, text) in `rest`, in order
    names: set[str] = set()
    installs_trl = False
    previous = ""
    for token in _TOKEN.finditer(rest):
        req = token.group("req")
        if req.startswith("#") and not token.group("q"):
            break  # a shell comment (`# install TRL from the main branch`): words, not requirements
        option_value = previous in _VALUED_OPTIONS
        previous = req
        if req.startswith("-") or option_value or "/" in req or "://" in req or req.startswith("."):
            if not option_value and not req.startswith("-") and trl_reference(req):
                installs_trl = True  # `git+https://github.com/huggingface/trl`: a fork or a commit, left as it is
                if add is not None:
                    edits.append((token.end(), token.end(), f" {shell_word(add)}"))
            continue
        declared = _Declared()
        rewrite_requirement(req, declared)
        names |= declared.names
        rw = rewrite_requirement(req, table)
        new = req if rw is None else rw.text
        if rw is not None:
            messages.extend(rw.outcome.messages)
        if not token.group("q"):
            new = shell_word(new)
        if new != req:
            edits.append((token.start("req") - len(token.group("q")), token.end(), new if not token.group("q")
                          else f"{token.group('q')}{new}{token.group('q')}"))
        if "trl" in declared.names:
            installs_trl = True
            if add is not None:
                edits.append((token.end(), token.end(), f" {shell_word(add)}"))
    if add is not None and installs_trl and COMPAT in names:
        edits = [e for e in edits if not e[2].lstrip().strip('"').startswith(add)]
    elif add is not None and installs_trl:
        messages.append(f"added {add}: the migrated code imports compat (trl-compat's package)")
    if not edits:
        return line, messages, installs_trl
    out, pos = [], 0
    for begin, finish, text in edits:
        out.append(rest[pos:begin])
        out.append(text)
        pos = finish
    out.append(rest[pos:])
    return m.group("head") + "".join(out) + line[m.end():], messages, installs_trl
