"""The repository's own classes across modules: which local class derives from which library class.

A rule sees one file; `from alignment import SFTConfig` there names a class defined in another module of the same
repository (`src/alignment/configs.py`, re-exported by `src/alignment/__init__.py`), which libcst's qualified names
call `alignment.SFTConfig` and nothing more. The migrator builds one `LocalClasses` index per run from the Python files
it walks (`compat.migrate.runner`, before any rule runs; `Options.local_classes`), so a rule can ask whether that name
is a subclass of `trl.SFTConfig`, of `transformers.TrainingArguments`, ...:

* `scan(module, text, path)`: one module's classes (name -> bases resolved through that module's imports, the methods
  its body defines) and its import bindings (for re-exports), read with `ast`. The runner gives the module's dotted
  name (the file's path from the topmost folder holding an `__init__.py` chain) and calls it only for files whose
  bytes pass `worth_scanning` (a class statement with bases, a `@dataclass` class, or a package `__init__.py` that
  may re-export one) and either match `SEED` (they name TRL, `TrainingArguments` or an argument parser) or derive
  from / re-export a class the index holds already (`referenced_words`) or define a dataclass a parser tuple of the
  index names (`dataclass_names`: a script's argument classes in another module), to a fixed point: on a copy of
  transformers (2,900 files) a few dozen files are parsed, not every one with a class;
* `LocalClasses.base_in(qname, wanted)`: the first qualified name of `wanted` that the local class `qname` derives
  from, through local classes, re-exports and aliases in any module of the index; None for a name the index does not
  know as a local class (a library name is not the index's business);
* `LocalClasses.defines(qname, method)`: whether the local class or a local base defines `method` itself;
  `LocalClasses.forwards_init(qname)`: whether every such `__init__` only hands `*args, **kwargs` on to the base's;
* `LocalClasses.delegates(qname, method)`: whether the parser method the local class defines itself is built on the
  library's parse methods (`LocalClass.delegating`: every value it returns comes from `self.<parse method>(...)` or
  from another method of the class, a one-element result unwrapped (`if len(x) == 1: x = x[0]`) at most), so it
  returns the dataclasses in the order of the class tuple, as alignment-handbook's `H4ArgumentParser.parse` does;
* `LocalClasses.args_uses`: where an instance of a class is passed to a `...Trainer(...)` call (`ArgsUse`: the
  class, the callee, `args=` or the positional index), read from the module's functions: `args=C(...)`, a name bound
  once in that function to `C(...)`, or unpacked from `parser.<method>()` of a parser bound once to
  `P((A, B, C))` (the element at the name's position). A rule asks which trainers a repository's config class
  feeds before it changes that class (`trainer-kwargs-to-config` basing a TrainingArguments subclass on the
  trainer's TRL config). A file is scanned for these when it names TRL and calls a `...Trainer(`.

A package under folders without `__init__.py` is also imported through them (PEP 420 namespace packages:
`from src.alignment import SFTConfig` beside `src/alignment/__init__.py`); the runner records those longer names
(`LocalClasses.namespaces`, up to two folders up) and `find` reads `src.alignment.X` as `alignment.X`.

Only what Python provably binds is followed: module-level `class`, `import`, `from ... import` (relative ones
resolved against the module's package); a name bound twice in a module is not followed. The index is data (tuples),
frozen and hashable, so it travels in `Options` to worker processes.
"""

from __future__ import annotations

import ast
import functools
import posixpath
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from migrations.kinds import grammar
from migrations.kinds.trainer_subclasses import ast_dotted

__all__ = ["ARGUMENT_PARSERS", "PARSE_METHODS", "SEED", "ArgsUse", "LocalClass", "LocalClasses", "dataclass_names",
           "module_entries", "referenced_words", "scan", "worth_scanning"]

#: Argument parsers that fill dataclasses (TRL's TrlParser subclasses HfArgumentParser on every release that had it),
#: and their methods that return the parsed dataclasses in the order of the parser's class tuple.
ARGUMENT_PARSERS = frozenset({"transformers.HfArgumentParser", "transformers.hf_argparser.HfArgumentParser",
                              "trl.TrlParser", "trl.scripts.TrlParser", "trl.scripts.utils.TrlParser",
                              "trl.commands.cli_utils.TrlParser"})
PARSE_METHODS = frozenset({"parse_args_into_dataclasses", "parse_yaml_file", "parse_json_file", "parse_dict",
                           "parse_args_and_config"})

_CLASS_WITH_BASES = re.compile(rb"(?m)^[ \t]*class[ \t]+(\w+)[ \t]*\(([^)]*)\)")
_FROM_IMPORT = re.compile(rb"(?m)^[ \t]*from[ \t]+[\w.]+[ \t]+import")
_WORD = re.compile(rb"\w+")
_TRAINER_CALL = re.compile(rb"\w*(?:Trainer|Parser)[ \t]*\(")
_DATACLASS = re.compile(rb"(?m)^[ \t]*@(?:dataclasses\.)?dataclass\b[^\n]*\n[ \t]*class[ \t]+(\w+)")
#: What makes a file parsed at once: it names TRL, TrainingArguments or an argument parser (the library classes
#: the rules ask about); a file that only derives from a class found so far is parsed when that class is known
SEED = re.compile(rb"\btrl\b|TrainingArguments|ArgumentParser")


def worth_scanning(data: bytes, is_package: bool) -> bool:
    """A cheap byte test: the file has a class statement with bases, it is a package's `__init__.py` with a
    `from ... import` (a re-export; re-exports from other modules are not followed), or it calls a `...Trainer(`
    or a `...Parser(` (where a class is passed as `args`, `LocalClasses.args_uses`, or parsed with others,
    `LocalClasses.parser_tuples`)."""
    return _CLASS_WITH_BASES.search(data) is not None or (is_package and _FROM_IMPORT.search(data) is not None) \
        or _TRAINER_CALL.search(data) is not None or _DATACLASS.search(data) is not None


def dataclass_names(data: bytes) -> frozenset[bytes]:
    """The names of the `@dataclass` classes a file defines (`@dataclass\nclass DatasetConfig:`): the file matters
    once a parser tuple of the index names one of them (`LocalClasses.parser_tuples`: a script's own argument classes
    in another module, sayands/noisy-lms's `src/configs.py`), so a rule can read their fields."""
    return frozenset(m.group(1) for m in _DATACLASS.finditer(data))


def referenced_words(data: bytes, is_package: bool) -> frozenset[bytes]:
    """The words a file's classes derive from (`Base`, `SFTConfig` of `class A(mod.Base, trl.SFTConfig)`), and for
    a package `__init__.py` or a file calling a `...Trainer(` / `...Parser(` every word it holds: the file matters once one of them
    names a class of the index."""
    found = {w for m in _CLASS_WITH_BASES.finditer(data) for w in _WORD.findall(m.group(2))}
    if is_package or _TRAINER_CALL.search(data):  # a re-export, or an instance of an imported class passed as args
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
    delegating: tuple[str, ...] = ()  # methods built on the library's parse methods (`LocalClasses.delegates`)
    dataclass: bool = False  # decorated with `dataclasses.dataclass` (its annotated defaults are its fields')
    fields: tuple[str, ...] = ()  # the names its own body annotates (`x: int = 0`)
    opaque: bool = False  # a base the module's bindings do not resolve (not in `bases`: it may be anything)
    forwarding_init: bool = False  # its `__init__(self, *args, **kwargs)` hands both on to the base's, untouched


@dataclass(frozen=True)
class ArgsUse:
    """An instance of class `cls` passed to the call of `callee` (qualified names as the module's imports resolve
    them) as `args=` (`slot` "args") or as the positional at index `slot` ("1", "2")."""

    cls: str
    callee: str
    slot: str


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


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a module or function body, not those of the functions, lambdas and classes nested in it."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))


def _bindings(scope: ast.AST) -> dict[str, list[tuple[ast.AST, int, int]]]:
    """name -> every (value, position, arity) binding it in the scope: `x = v` is (v, 0, 0), `a, x = v` is
    (v, 1, 2); any other binding (a parameter, `for`, `with`, `+=`, an import, a nested def) is (node, -1, 0)."""
    out: dict[str, list[tuple[ast.AST, int, int]]] = {}
    plain: set[int] = set()  # the Name targets of plain assignments, counted by their Assign
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        a = scope.args
        for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, *filter(None, (a.vararg, a.kwarg))]:
            out.setdefault(arg.arg, []).append((scope, -1, 0))
    nodes = list(_own_nodes(scope))
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            elements = [target] if isinstance(target, ast.Name) else \
                target.elts if isinstance(target, (ast.Tuple, ast.List)) else []
            for i, e in enumerate(elements):
                if isinstance(e, ast.Name):
                    plain.add(id(e))
                    arity = 0 if e is target else len(elements)
                    out.setdefault(e.id, []).append((node.value, i if arity else 0, arity))
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)) and id(node) not in plain:
            out.setdefault(node.id, []).append((node, -1, 0))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.setdefault(node.name, []).append((node, -1, 0))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                out.setdefault((alias.asname or alias.name).split(".")[0], []).append((node, -1, 0))
    return out


def _args_uses(tree: ast.Module, resolve) -> list[ArgsUse]:  # type: ignore[no-untyped-def]
    """Where an instance of a class reaches a `...Trainer(...)` call (see `LocalClasses.args_uses`)."""
    found: list[ArgsUse] = []
    scopes = [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]
    module_bindings = _bindings(tree)
    for scope in scopes:
        local = _bindings(scope) if scope is not tree else module_bindings

        def single(name: str) -> tuple[ast.AST, int, int] | None:
            bound = local.get(name) or ([] if scope is tree else module_bindings.get(name, []))
            return bound[0] if len(bound) == 1 and bound[0][1] >= 0 else None

        def instance_of(expr: ast.expr) -> str | None:
            if isinstance(expr, ast.Call):
                return resolve(expr.func)
            if not isinstance(expr, ast.Name):
                return None
            bound = single(expr.id)
            if bound is None:
                return None
            value, index, arity = bound
            if arity == 0:
                return resolve(value.func) if isinstance(value, ast.Call) else None
            if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
                    and isinstance(value.func.value, ast.Name)):
                return None
            parser = single(value.func.value.id)
            if parser is None or parser[2] != 0 or not isinstance(parser[0], ast.Call) or not parser[0].args:
                return None
            classes = parser[0].args[0]
            if not isinstance(classes, (ast.Tuple, ast.List)) or len(classes.elts) != arity:
                return None
            return resolve(classes.elts[index])

        for node in _own_nodes(scope):
            if not isinstance(node, ast.Call):
                continue
            callee = resolve(node.func)
            if callee is None or not callee.rsplit(".", 1)[-1].endswith("Trainer"):
                continue
            slots = [(str(i), a) for i, a in enumerate(node.args) if not isinstance(a, ast.Starred)]
            slots += [(k.arg, k.value) for k in node.keywords if k.arg is not None]
            for slot, value in slots:
                cls = instance_of(value)
                if cls is not None and cls != callee:
                    found.append(ArgsUse(cls, callee, slot))
    return found


def _parser_tuples(tree: ast.Module, resolve) -> list[tuple[str, ...]]:  # type: ignore[no-untyped-def]
    """The class tuples of the module's `...Parser((A, B, C))` calls, each class as its qualified name ("" where the
    module's imports do not resolve it)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], (ast.Tuple, ast.List)):
            callee = resolve(node.func) or ""
            if callee.rsplit(".", 1)[-1].endswith("Parser"):
                found.append(tuple(resolve(e) or "" for e in node.args[0].elts))
    return found


def _delegating(node: ast.ClassDef) -> tuple[str, ...]:
    """The methods of a parser class built on the library's parse methods (see `LocalClasses.delegates`)."""
    own = {s.name for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    out = []
    for method in node.body:
        if not isinstance(method, ast.FunctionDef):
            continue

        def self_call(value: ast.AST) -> str | None:
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                    and isinstance(value.func.value, ast.Name) and value.func.value.id == "self":
                return value.func.attr
            return None

        returns = [n.value for n in ast.walk(method) if isinstance(n, ast.Return)]
        if not returns or any(r is None for r in returns):
            continue
        bindings = _bindings(method)
        called: set[str] = set()
        ok = True
        for value in returns:
            name = self_call(value)
            if name is not None:
                called.add(name)
                continue
            if not isinstance(value, ast.Name):
                ok = False
                break
            for bound, index, arity in bindings.get(value.id, [(None, -1, 0)]):
                name = self_call(bound) if arity == 0 else None
                unwrap = isinstance(bound, ast.Subscript) and isinstance(bound.value, ast.Name) \
                    and bound.value.id == value.id and isinstance(bound.slice, ast.Constant) and bound.slice.value == 0
                if name is not None:
                    called.add(name)
                elif not unwrap:
                    ok = False
        if ok and called and called <= PARSE_METHODS | own and called & PARSE_METHODS:
            out.append(method.name)
    return tuple(out)


def _forwarding_init(node: ast.ClassDef) -> bool:
    """The class's own `__init__` is `(self, *args, **kwargs)` and uses `args` and `kwargs`
    only in one call of the base's `__init__` that passes both on as they came (`super().__init__(*args, **kwargs)`,
    `super(Cls, self).__init__(...)` or `Base.__init__(self, *args, **kwargs)`): every argument of a call of the class
    reaches the base's `__init__` as written."""
    init = next((s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
    if init is None:
        return False
    a = init.args
    if len(a.posonlyargs) + len(a.args) != 1 or a.kwonlyargs or a.vararg is None or a.kwarg is None:
        return False  # a keyword of its own (`*args, beta=0.1, **kwargs`) would take a trainer keyword away
    star, starstar = a.vararg.arg, a.kwarg.arg
    forwarded = []
    for call in (n for n in ast.walk(init) if isinstance(n, ast.Call)):
        f = call.func
        if not (isinstance(f, ast.Attribute) and f.attr == "__init__"):
            continue
        positional = call.args[1:] if isinstance(f.value, ast.Name) else call.args  # `Base.__init__(self, ...)`
        if [type(x) for x in positional] == [ast.Starred] and isinstance(positional[0].value, ast.Name) \
                and positional[0].value.id == star and len(call.keywords) == 1 and call.keywords[0].arg is None \
                and isinstance(call.keywords[0].value, ast.Name) and call.keywords[0].value.id == starstar:
            forwarded.append(call)
    if len(forwarded) != 1:
        return False
    inside = {id(n) for n in ast.walk(forwarded[0])}
    return not any(isinstance(n, ast.Name) and n.id in (star, starstar) and id(n) not in inside for n in ast.walk(init))


def scan(module: str, text: str, path: str, is_package: bool = False
         ) -> tuple[list[LocalClass], dict[str, str], list[ArgsUse], list[tuple[str, ...]]]:
    """(classes, bindings, uses, parser tuples) of one module: its module-level classes, name -> qualified name of
    what its imports bind (`from .configs import SFTConfig` in package `alignment` -> `alignment.SFTConfig`:
    `alignment.configs.SFTConfig`), where its functions pass a class's instance to a trainer (`args_uses`), and the
    class tuples of its parsers (`parser_tuples`). A name bound more than once at module level is left out."""
    try:
        tree = grammar.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return [], {}, [], []
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
        written = ast_dotted(expr)
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
        resolved = [resolve(b) for b in node.bases]
        bases = tuple(q for q in resolved if q is not None)
        methods = tuple(s.name for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)))
        decorated = any(resolve(d.func if isinstance(d, ast.Call) else d) == "dataclasses.dataclass"
                        for d in node.decorator_list)
        fields = tuple(s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name))
        found.append(LocalClass(f"{module}.{name}", bases, methods, path, _delegating(node), decorated, fields,
                                None in resolved or bool(node.keywords), _forwarding_init(node)))
    bindings = {f"{module}.{k}": v for k, v in imports.items() if counts[k] == 1}
    return found, bindings, _args_uses(tree, resolve), _parser_tuples(tree, resolve)


def module_entries(module: str, text: str, path: str, is_package: bool = False) -> tuple[tuple, ...]:
    """`scan` as tuples, ready for `LocalClasses.merge`."""
    classes, bindings, uses, parsers = scan(module, text, path, is_package)
    return tuple(classes), tuple(sorted(bindings.items())), tuple(uses), tuple(parsers)


@dataclass(frozen=True)
class LocalClasses:
    """The index of one run (see the module docstring)."""

    classes: tuple[LocalClass, ...] = ()
    aliases: tuple[tuple[str, str], ...] = ()  # re-exports: `alignment.SFTConfig` -> `alignment.configs.SFTConfig`
    args_uses: tuple[ArgsUse, ...] = ()
    parser_tuples: tuple[tuple[str, ...], ...] = ()
    #: names a module's top package (or top-level module) also has through the folders above it, which hold no
    #: `__init__.py` (PEP 420 namespace packages): `src/alignment/` imported as `src.alignment` -> `alignment`
    namespaces: tuple[tuple[str, str], ...] = ()

    @staticmethod
    def merge(parts: Iterable[tuple]) -> LocalClasses:
        """One index from `module_entries` results ((classes, bindings[, uses[, parser tuples]]))."""
        classes: list[LocalClass] = []
        aliases: list[tuple[str, str]] = []
        uses: list[ArgsUse] = []
        parsers: list[tuple[str, ...]] = []
        for found, bindings, *more in parts:
            classes.extend(found)
            aliases.extend(bindings)
            uses.extend(more[0] if more else ())
            parsers.extend(more[1] if len(more) > 1 else ())
        return LocalClasses(tuple(classes), tuple(aliases), tuple(uses), tuple(parsers))

    @functools.cached_property
    def _by_name(self) -> dict[str, LocalClass]:
        seen: dict[str, LocalClass | None] = {}
        for c in self.classes:  # the same qualified name from two files (two roots): ambiguous, not followed
            seen[c.qname] = None if c.qname in seen else c
        return {k: v for k, v in seen.items() if v is not None}

    @functools.cached_property
    def _alias(self) -> dict[str, str]:
        return dict(self.aliases)

    @functools.cached_property
    def _namespace(self) -> dict[str, str | None]:
        seen: dict[str, str | None] = {}
        for longer, top in self.namespaces:  # one folder name for two packages (two roots): ambiguous, not followed
            seen[longer] = None if seen.get(longer, top) != top else top
        return seen

    def _through_namespace(self, qname: str) -> str:
        """`qname` with a namespace-package prefix (`src.alignment.X`) replaced by its package (`alignment.X`)."""
        parts = qname.split(".")
        for i in range(len(parts) - 1, 1, -1):
            top = self._namespace.get(".".join(parts[:i]))
            if top is not None:
                return ".".join((top, *parts[i:]))
        return qname

    def find(self, qname: str) -> LocalClass | None:
        """The local class `qname` names, through re-exports and namespace packages; None when it is not one."""
        seen: set[str] = set()
        if qname not in self._by_name and qname not in self._alias and self.namespaces:
            qname = self._through_namespace(qname)
        while qname not in self._by_name:
            if qname in seen or qname not in self._alias:
                return None
            seen.add(qname)
            qname = self._alias[qname]
        return self._by_name[qname]

    def find_relative(self, path: str, level: int, module: str | None, name: str) -> LocalClass | None:
        """The local class that `from <level dots><module> import <name>` names in the file at `path` (the walk's
        path, as the index records it): the class `name` defined in the module file that import reaches
        (`from ..configs import GRPOConfig` in `src/open_r1/utils/model_utils.py`: `src/open_r1/configs.py` or
        `src/open_r1/configs/__init__.py`), through its qualified name (a module file that defines no class itself is
        not followed)."""
        if level < 1:
            return None
        folder = posixpath.dirname(path.replace("\\", "/"))
        for _ in range(level - 1):
            folder = posixpath.dirname(folder)
        base = posixpath.join(folder, *module.split(".")) if module else folder
        files = {f"{base}.py", posixpath.join(base, "__init__.py")}
        modules = {c.qname.rsplit(".", 1)[0] for c in self.classes if c.path.replace("\\", "/") in files}
        if len(modules) != 1:
            return None
        return self.find(f"{modules.pop()}.{name}")

    def defined_in(self, path: str | None, name: str) -> LocalClass | None:
        """The class `name` defined at the top level of the module file at `path` (the walk's path, as the index
        records it): how a module names its own classes, which libcst qualifies with no module."""
        if path is None:
            return None
        path = path.replace("\\", "/")
        found = [c for c in self.classes if c.path.replace("\\", "/") == path and c.qname.rsplit(".", 1)[-1] == name]
        return found[0] if len(found) == 1 else None

    def find_in(self, path: str | None, qname: str) -> LocalClass | None:
        """The local class that `qname`, as libcst qualifies a name in the file at `path`, names: a relative import
        (`..configs.GRPOConfig`) through `find_relative`, anything else through `find`."""
        if not qname.startswith("."):
            return self.find(qname)
        if path is None:
            return None
        module, _, short = qname.lstrip(".").rpartition(".")
        return self.find_relative(path, len(qname) - len(qname.lstrip(".")), module or None, short)

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

    def uses_of(self, qname: str) -> list[ArgsUse]:
        """The `args_uses` whose class is the local class `qname` (through re-exports)."""
        cls = self.find(qname)
        return [] if cls is None else [u for u in self.args_uses if self.find(u.cls) is cls]

    def parsed_with(self, qname: str) -> list[str]:
        """The other classes of every parser tuple holding the local class `qname` ("" for one not resolved)."""
        cls = self.find(qname)
        return [] if cls is None else [o for t in self.parser_tuples if any(self.find(e) is cls for e in t)
                                       for o in t if self.find(o) is not cls]

    def lineage(self, qname: str) -> tuple[list[LocalClass], list[str]]:
        """(the local class `qname` and its local bases, the bases on the way that are not local classes)."""
        classes = list(self._lineage(qname))
        return classes, [b for c in classes for b in c.bases if self.find(b) is None]

    def subclassed(self, qname: str) -> bool:
        """True when a local class derives from the local class `qname`."""
        cls = self.find(qname)
        return cls is not None and any(self.find(b) is cls for c in self.classes for b in c.bases)

    def delegates(self, qname: str, method: str) -> bool:
        """True when the first local class on `qname`'s lineage defining `method` builds it on the library's parse
        methods (`LocalClass.delegating`)."""
        cls = next((c for c in self._lineage(qname) if method in c.methods), None)
        return cls is not None and method in cls.delegating

    def forwards_init(self, qname: str) -> bool:
        """True when no local class on `qname`'s lineage defines `__init__` but to hand its arguments on to the base's
        as they came (`LocalClass.forwarding_init`): a call of the class passes the library base exactly those."""
        return all(cls.forwarding_init for cls in self._lineage(qname) if "__init__" in cls.methods)

    def defines(self, qname: str, method: str) -> bool:
        """True when the local class `qname` or one of its local bases defines `method` in its own body."""
        return any(method in cls.methods for cls in self._lineage(qname))
