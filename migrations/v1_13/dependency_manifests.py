"""The repository's own dependency declarations, raised to what the migrated code needs on the target TRL line.

Formats: `requirements*.txt` (and `*requirements.txt`, `constraints*.txt`; `-r`/`-c` includes, options, comments,
hashes and environment markers are kept), `pyproject.toml` (PEP 621 `[project]` dependencies and
optional-dependencies, PEP 735 `[dependency-groups]`, Poetry's `[tool.poetry]` dependencies/dev-dependencies/groups,
edited with `tomlkit`), `setup.cfg` (`install_requires`, `extras_require`), literal `install_requires` /
`extras_require` in `setup.py` (inline, or a module-level list the call names), and the `pip:` section of a conda
`environment.yml`.

Wherever `trl`, `transformers`, `accelerate`, `datasets`, `peft`, `deepspeed`, `vllm` or `liger-kernel` is named, its
specifier is raised to the floor of the target line (`compat.floors`, the single source of the numbers; `trl` to the
target line itself); see `migrations.kinds.requirements` for the policy. No package is ever added, and the file is
byte-identical outside the specifiers that changed. A pin the target cannot satisfy (`vllm==0.19.0` for TRL 1.16) is
rewritten to the supported window and reported as a warning; a changed pin on a hashed line also gets a manual
finding (the hashes must be regenerated).
"""

from __future__ import annotations

import re
from typing import Any

import libcst as cst

from migrations.base import Finding, ManifestMigration, RuleContext
from migrations.kinds.requirements import PackageFloor, Rewrite, floors_for, rewrite_poetry, rewrite_requirement

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
        table = floors_for(ctx.options.target_trl, transformers=ctx.options.target("transformers"))
        if filename == "pyproject.toml":
            return _pyproject(self, text, table, ctx)
        if filename == "setup.cfg":
            return _setup_cfg(self, text, table, ctx)
        if filename == "setup.py":
            return _setup_py(self, text, table, ctx)
        if filename.endswith((".yml", ".yaml")):
            return _environment_yml(self, text, table, ctx)
        return _requirements_txt(self, text, table, ctx)

    # -- reporting --------------------------------------------------------------------------------------------------
    def report(self, ctx: RuleContext, rw: Rewrite, line: int, *, hashed: bool = False) -> None:
        severity = "warning" if rw.outcome.unsatisfiable or any("dropped" in m for m in rw.outcome.messages) else "info"
        for message in rw.outcome.messages:
            ctx.report(Finding(self.id, message, line, 1, self.anchor, severity, True))
        if hashed:
            ctx.report(Finding(self.id, f"{rw.package}: the version changed on a hashed line; regenerate its hashes "
                                        "(e.g. pip-compile --generate-hashes)", line, 1, self.anchor, "manual", False))


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
        if not _is_requirement(first):
            continue
        end = _requirement_end(first)
        hashed = "--hash" in logical
        rw = rewrite_requirement(first[:end], table, hashed=hashed)
        if rw is None:
            continue
        out[start] = rw.text + first[end:]
        rule.report(ctx, rw, start + 1, hashed=hashed)
    return "".join(out)


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

    project = doc.get("project")
    if project is not None:
        fix_array(project.get("dependencies"))
        for array in (project.get("optional-dependencies") or {}).values():
            fix_array(array)
    for array in (doc.get("dependency-groups") or {}).values():
        fix_array(array)
    poetry = (doc.get("tool") or {}).get("poetry")
    if poetry is not None:
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


def _setup_cfg(rule: DependencyManifests, text: str, table: dict[str, PackageFloor], ctx: RuleContext) -> str:
    lines = text.splitlines(keepends=True)
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
            relevant = (section == "options" and key.group("key") == "install_requires") or (
                section == "options.extras_require")
            in_value = relevant
            if not relevant:
                continue
            value_start = key.start("value")
        elif in_value and body[:1].isspace():
            value_start = 0
        else:
            if body.strip() and not body[:1].isspace():
                in_value = False
            continue
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


def _environment_yml(rule: DependencyManifests, text: str, table: dict[str, PackageFloor], ctx: RuleContext) -> str:
    lines = text.splitlines(keepends=True)
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
        rw = rewrite_requirement(item.group("req"), table)
        if rw is None:
            continue
        start, end = item.span("req")
        lines[n] = line[:start] + rw.text + line[end:]
        rule.report(ctx, rw, n + 1)
    return "".join(lines)


MIGRATION = DependencyManifests()
