"""The repository's own classes across modules: which local class derives from which library class.

A rule sees one file; `from alignment import SFTConfig` there names a class defined in another module of the same
repository (`src/alignment/configs.py`, re-exported by `src/alignment/__init__.py`), which libcst's qualified names
call `alignment.SFTConfig` and nothing more. The migrator builds one `LocalClasses` index per run from the Python files
it walks (`compat.migrate.runner`, before any rule runs; `Options.local_classes`), so a rule can ask whether that name
is a subclass of `trl.SFTConfig`, of `transformers.TrainingArguments`, ...:

* `scan(module, text, path)`: one module's classes (name -> bases resolved through that module's imports, the methods
  its body defines) and its import bindings (for re-exports), read with `ast`. The runner gives the module's dotted
  name (the file's path from the topmost folder holding an `__init__.py` chain) and calls it only for files whose
  bytes pass `worth_scanning` (a class statement with bases, or a package `__init__.py` that may re-export one) and
  either match `SEED` (they name TRL, `TrainingArguments` or an argument parser) or derive from / re-export a class
  the index holds already (`referenced_words`, to a fixed point): on a copy of transformers (2,900 files) a few dozen
  files are parsed, not every one with a class;
* `LocalClasses.base_in(qname, wanted)`: the first qualified name of `wanted` that the local class `qname` derives
  from, through local classes, re-exports and aliases in any module of the index; None for a name the index does not
  know as a local class (a library name is not the index's business);
* `LocalClasses.defines(qname, method)`: whether the local class or a local base defines `method` itself.

Only what Python provably binds is followed: module-level `class`, `import`, `from ... import` (relative ones
resolved against the module's package); a name bound twice in a module is not followed. The index is data (tuples),
frozen and hashable, so it travels in `Options` to worker processes.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from migrations.kinds.trainer_subclasses import _dotted

__all__ = ["SEED", "LocalClass", "LocalClasses", "module_entries", "referenced_words", "scan", "worth_scanning"]

_CLASS_WITH_BASES = re.compile(rb"(?m)^[ \t]*class[ \t]+(\w+)[ \t]*\(([^)]*)\)")
_FROM_IMPORT = re.compile(rb"(?m)^[ \t]*from[ \t]+[\w.]+[ \t]+import")
_WORD = re.compile(rb"\w+")
#: What makes a file parsed at once: it names TRL, TrainingArguments or an argument parser (the library classes
#: the rules ask about); a file that only derives from a class found so far is parsed when that class is known
SEED = re.compile(rb"\btrl\b|TrainingArguments|ArgumentParser")


def worth_scanning(data: bytes, is_package: bool) -> bool:
    """A cheap byte test: the file has a class statement with bases, or it is a package's `__init__.py` with a
    `from ... import` (a re-export; re-exports from other modules are not followed)."""
    return _CLASS_WITH_BASES.search(data) is not None or (is_package and _FROM_IMPORT.search(data) is not None)


def referenced_words(data: bytes, is_package: bool) -> frozenset[bytes]:
    """The words a file's classes derive from (`Base`, `SFTConfig` of `class A(mod.Base, trl.SFTConfig)`), and for
    a package `__init__.py` every word it imports: the file matters once one of them names a class of the index."""
    found = {w for m in _CLASS_WITH_BASES.finditer(data) for w in _WORD.findall(m.group(2))}
    if is_package:
        found |= set(_WORD.findall(data))
    return frozenset(found)


@dataclass(frozen=True)
class LocalClass:
    """A class of the repository: `qname` (`alignment.configs.SFTConfig`), its bases' qualified names as written
    (`transformers.TrainingArguments`, `alignment.configs.Base`), the methods its own body defines, and its file."""

    qname: str
    bases: tuple[str, ...]
    methods: tuple[str, ...]
    path: str


def _absolute(module: str, is_package: bool, level: int, name: str | None) -> str | None:
    """The absolute module of `from <level dots><name> import ...` inside `module`."""
    if level == 0:
        return name
    parts = module.split(".")
    package = parts if is_package else parts[:-1]
    if level - 1 > len(package):
        return None
    base = package[: len(package) - (level - 1)]
    return ".".join([*base, *([name] if name else [])]) or None


def scan(module: str, text: str, path: str, is_package: bool = False) -> tuple[list[LocalClass], dict[str, str]]:
    """(classes, bindings) of one module: its module-level classes, and name -> qualified name of what its imports
    bind (`from .configs import SFTConfig` in package `alignment` -> `alignment.SFTConfig`: `alignment.configs.
    SFTConfig`). A name bound more than once at module level is left out of both."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return [], {}
    counts: dict[str, int] = {}
    imports: dict[str, str] = {}
    classes: dict[str, ast.ClassDef] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef):
            classes[stmt.name] = stmt
            counts[stmt.name] = counts.get(stmt.name, 0) + 1
        elif isinstance(stmt, ast.Import):
            for a in stmt.names:
                bound = a.asname or a.name.split(".")[0]
                imports[bound] = a.name if a.asname else bound
                counts[bound] = counts.get(bound, 0) + 1
        elif isinstance(stmt, ast.ImportFrom):
            source = _absolute(module, is_package, stmt.level, stmt.module)
            for a in stmt.names:
                if a.name == "*" or source is None:
                    continue
                bound = a.asname or a.name
                imports[bound] = f"{source}.{a.name}"
                counts[bound] = counts.get(bound, 0) + 1
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.FunctionDef, ast.AsyncFunctionDef)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else \
                [stmt.target] if isinstance(stmt, ast.AnnAssign) else [ast.Name(stmt.name)]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        counts[n.id] = counts.get(n.id, 0) + 1

    def resolve(expr: ast.expr) -> str | None:
        written = _dotted(expr)
        if written is None:
            return None
        head, _, rest = written.partition(".")
        if counts.get(head, 0) != 1:
            return None
        if head in imports:
            return imports[head] + (f".{rest}" if rest else "")
        if head in classes:
            return f"{module}.{written}"
        return None

    found = []
    for name, node in classes.items():
        if counts[name] != 1:
            continue
        bases = tuple(q for q in (resolve(b) for b in node.bases) if q is not None)
        methods = tuple(s.name for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)))
        found.append(LocalClass(f"{module}.{name}", bases, methods, path))
    bindings = {f"{module}.{k}": v for k, v in imports.items() if counts[k] == 1}
    return found, bindings


def module_entries(module: str, text: str, path: str, is_package: bool = False
                   ) -> tuple[tuple[LocalClass, ...], tuple[tuple[str, str], ...]]:
    """`scan` as tuples, ready for `LocalClasses.merge`."""
    classes, bindings = scan(module, text, path, is_package)
    return tuple(classes), tuple(sorted(bindings.items()))


@dataclass(frozen=True)
class LocalClasses:
    """The index of one run (see the module docstring)."""

    classes: tuple[LocalClass, ...] = ()
    aliases: tuple[tuple[str, str], ...] = ()  # re-exports: `alignment.SFTConfig` -> `alignment.configs.SFTConfig`

    @staticmethod
    def merge(parts: Iterable[tuple[tuple[LocalClass, ...], tuple[tuple[str, str], ...]]]) -> LocalClasses:
        classes: list[LocalClass] = []
        aliases: list[tuple[str, str]] = []
        for found, bindings in parts:
            classes.extend(found)
            aliases.extend(bindings)
        return LocalClasses(tuple(classes), tuple(aliases))

    @functools.cached_property
    def _by_name(self) -> dict[str, LocalClass]:
        seen: dict[str, LocalClass | None] = {}
        for c in self.classes:  # the same qualified name from two files (two roots): ambiguous, not followed
            seen[c.qname] = None if c.qname in seen else c
        return {k: v for k, v in seen.items() if v is not None}

    @functools.cached_property
    def _alias(self) -> dict[str, str]:
        return dict(self.aliases)

    def find(self, qname: str) -> LocalClass | None:
        """The local class `qname` names, through re-exports; None when it is not one."""
        seen: set[str] = set()
        while qname not in self._by_name:
            if qname in seen or qname not in self._alias:
                return None
            seen.add(qname)
            qname = self._alias[qname]
        return self._by_name[qname]

    def _lineage(self, qname: str) -> Iterator[LocalClass]:
        """The local class `qname` and its local bases, depth first, bases in order, each once."""
        start = self.find(qname)
        stack, seen = [start] if start else [], set()
        while stack:
            cls = stack.pop()
            if cls.qname in seen:
                continue
            seen.add(cls.qname)
            yield cls
            stack.extend(c for c in reversed([self.find(b) for b in cls.bases]) if c is not None)

    def base_in(self, qname: str, wanted: Iterable[str]) -> str | None:
        """The first name of `wanted` the local class `qname` derives from (depth first, bases in order)."""
        wanted = frozenset(wanted)
        return next((b for cls in self._lineage(qname) for b in cls.bases if b in wanted), None)

    def defines(self, qname: str, method: str) -> bool:
        """True when the local class `qname` or one of its local bases defines `method` in its own body."""
        return any(method in cls.methods for cls in self._lineage(qname))
