"""Read a Python package's public API from its source files, with `ast` only (nothing is imported or executed).

Used by the atlas generator (`migrations/atlas/generate.py`) on release wheels and by the tests on the installed
package, so both go through exactly the same code. Generic: the package name is a parameter (trl, transformers,
peft, ...), and `include` restricts which modules are read (transformers has thousands).

What one module yields (:class:`ModuleInfo`):

* ``names``: every name the module binds at top level, with how: ``def`` / ``class`` / ``var`` (assignment,
  annotated assignment, ``__all__`` entry with no other binding), ``import`` (``from x import y`` and
  ``import x.y as z``: a re-export, target = the qualified name it refers to), ``lazy`` (an entry of a
  transformers-style ``_import_structure`` dict that ``_LazyModule`` serves: target = ``pkg.sub.name``). Statements
  under ``if``/``try``/``with`` at module level count, both branches (``if TYPE_CHECKING:`` imports, optional
  dependency blocks). ``from .x import *`` is expanded after every module is read (:func:`expand_stars`). Names
  starting with ``_`` are left out (except dunders such as ``__version__``, and private classes and functions,
  which public names inherit from or resolve to).
* ``functions``: the signature of every top-level function.
* ``classes``: for every top-level class: bases (qualified through the module's imports), whether it is a
  dataclass, its own ``__init__`` signature (if it defines one), its dataclass fields, its public method names.

A signature is a tuple of parameters ``(name, kind, default, annotation)``; ``kind`` is ``po`` (positional-only),
``pk``, ``va`` (``*args``), ``ko`` (keyword-only) or ``vk`` (``**kwargs``); ``default`` and ``annotation`` are source
text normalised by ``ast.unparse`` (so reformatting a file does not make a new version), or None. ``self``/``cls``
of methods is dropped. For a ``**kwargs`` the extractor also records what the body does with it: the string keys it
reads (``kwargs.pop("x")``, ``kwargs.get("x")``, ``kwargs["x"]``, ``"x" in kwargs``) and the calls it is forwarded to
(``super().__init__(**kwargs)``), and keywords renamed by ``@deprecate_kwarg("old", new_name="new")`` decorators.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

#: Parameter kinds, in the order Python requires them.
KINDS = ("po", "pk", "va", "ko", "vk")

Param = tuple  # (name, kind, default | None, annotation | None)


@dataclass
class Signature:
    params: tuple[Param, ...]
    kwargs_keys: tuple[str, ...] = ()  # string keys read out of **kwargs in the body
    kwargs_forward: tuple[str, ...] = ()  # calls **kwargs is passed on to ("super().__init__", ...)
    renamed: tuple[tuple[str, str], ...] = ()  # (old, new) from @deprecate_kwarg decorators

    def to_json(self) -> list:
        return [[list(p) for p in self.params], list(self.kwargs_keys), list(self.kwargs_forward),
                [list(r) for r in self.renamed]]


@dataclass
class ClassInfo:
    bases: tuple[str, ...]
    dataclass: bool
    init: Signature | None
    fields: tuple[tuple, ...] | None  # (name, annotation, default | None, factory: bool, init: bool)
    methods: tuple[str, ...]

    def to_json(self, sig_id: Callable[[Signature], int]) -> list:
        return [list(self.bases), int(self.dataclass), None if self.init is None else sig_id(self.init),
                None if self.fields is None else [list(f) for f in self.fields], list(self.methods)]


@dataclass
class ModuleInfo:
    name: str
    is_package: bool
    names: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # name -> (kind, target)
    stars: list[str] = field(default_factory=list)  # modules star-imported
    all: list[str] | None = None
    functions: dict[str, Signature] = field(default_factory=dict)
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    opaque: bool = False  # the module exists but its names were not read (see read_package's `names`/`listed`)


def _public(name: str) -> bool:
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def _text(node: ast.AST | None) -> str | None:
    if node is None:
        return None
    text = ast.unparse(node)
    return text if len(text) <= 300 else text[:297] + "..."


def module_name(path: str) -> tuple[str, bool] | None:
    """`trl/trainer/utils.py` -> ("trl.trainer.utils", False); `trl/__init__.py` -> ("trl", True)."""
    if not path.endswith(".py"):
        return None
    parts = path[:-3].split("/")
    if any(not p.isidentifier() for p in parts):
        return None
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def _resolve_relative(module: ModuleInfo, level: int, target: str | None) -> str:
    base = module.name.split(".")
    if not module.is_package:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, *([target] if target else [])])


def _deprecate_kwarg(decorators: list[ast.expr]) -> tuple[tuple[str, str], ...]:
    out = []
    for d in decorators:
        if not isinstance(d, ast.Call):
            continue
        fname = d.func.attr if isinstance(d.func, ast.Attribute) else getattr(d.func, "id", "")
        if fname != "deprecate_kwarg" or not d.args or not isinstance(d.args[0], ast.Constant):
            continue
        # transformers' signature: deprecate_kwarg(old_name, version, new_name=None, ...)
        new = next((k.value for k in d.keywords if k.arg == "new_name"), None)
        if new is None and len(d.args) > 2:
            new = d.args[2]
        if isinstance(new, ast.Constant) and isinstance(new.value, str) and isinstance(d.args[0].value, str):
            out.append((d.args[0].value, new.value))
    return tuple(out)


def signature_of(fn: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> Signature:
    a = fn.args
    params: list[Param] = []
    positional = [*a.posonlyargs, *a.args]
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    for i, (arg, default) in enumerate(zip(positional, defaults, strict=True)):
        if method and i == 0:
            continue
        kind = "po" if i < len(a.posonlyargs) else "pk"
        params.append((arg.arg, kind, _text(default), _text(arg.annotation)))
    if a.vararg:
        params.append((a.vararg.arg, "va", None, _text(a.vararg.annotation)))
    for arg, default in zip(a.kwonlyargs, a.kw_defaults, strict=True):
        params.append((arg.arg, "ko", _text(default), _text(arg.annotation)))
    keys: list[str] = []
    forward: list[str] = []
    if a.kwarg:
        params.append((a.kwarg.arg, "vk", None, _text(a.kwarg.annotation)))
        kw = a.kwarg.arg
        for node in ast.walk(fn):
            if isinstance(node, ast.Call):
                f = node.func
                if (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == kw
                        and f.attr in ("pop", "get", "setdefault") and node.args
                        and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                    keys.append(node.args[0].value)
                if any(k.arg is None and isinstance(k.value, ast.Name) and k.value.id == kw for k in node.keywords):
                    forward.append(_text(f) or "")
            elif (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == kw
                  and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)):
                keys.append(node.slice.value)
            elif (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn))
                  and isinstance(node.comparators[0], ast.Name) and node.comparators[0].id == kw
                  and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str)):
                keys.append(node.left.value)
    return Signature(tuple(params), tuple(sorted(set(keys))), tuple(sorted(set(forward))),
                     _deprecate_kwarg(fn.decorator_list))


def _is_dataclass(cls: ast.ClassDef) -> bool:
    for d in cls.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name == "dataclass":
            return True
    return False


def _fields(cls: ast.ClassDef) -> tuple[tuple, ...]:
    out = []
    for stmt in cls.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        ann = _text(stmt.annotation) or ""
        if ann.startswith(("ClassVar", "typing.ClassVar")) or ann in ("KW_ONLY", "dataclasses.KW_ONLY"):
            continue
        default, factory, init = _text(stmt.value), False, True
        v = stmt.value
        if isinstance(v, ast.Call) and "field" in (getattr(v.func, "id", None), getattr(v.func, "attr", None)):
            default = None
            for k in v.keywords:
                if k.arg == "default":
                    default = _text(k.value)
                elif k.arg == "default_factory":
                    default, factory = _text(k.value), True
                elif k.arg == "init" and isinstance(k.value, ast.Constant) and k.value.value is False:
                    init = False
        out.append((stmt.target.id, ann, default, factory, init))
    return tuple(out)


class _ModuleReader:
    def __init__(self, info: ModuleInfo, package: str) -> None:
        self.info = info
        self.package = package
        self.imports: dict[str, str] = {}  # local name -> qualified name, for bases
        self.lazy: dict[str, list[str]] = {}

    def qualify(self, node: ast.expr) -> str:
        text = ast.unparse(node)
        head, _, rest = text.partition(".")
        if head in self.imports:
            return self.imports[head] + (f".{rest}" if rest else "")
        if head in self.info.classes or head in self.info.functions:
            return f"{self.info.name}.{text}"
        return text

    def bind(self, name: str, kind: str, target: str | None = None) -> None:
        # private classes and functions are kept: they are bases and shims public names resolve to
        if (_public(name) or kind in ("class", "def")) and not (kind == "var" and name in self.info.names):
            self.info.names[name] = (kind, target)

    def lazy_add(self, key: object, names: ast.expr) -> None:
        if isinstance(key, str) and isinstance(names, (ast.List, ast.Tuple)):
            self.lazy.setdefault(key, []).extend(
                e.value for e in names.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))

    def read(self, body: Iterable[ast.stmt]) -> None:
        for stmt in body:
            self.stmt(stmt)

    def stmt(self, s: ast.stmt) -> None:
        info = self.info
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.bind(s.name, "def")
            if not s.name.startswith("__"):
                info.functions[s.name] = signature_of(s, method=False)
        elif isinstance(s, ast.ClassDef):
            self.bind(s.name, "class")
            init = next((b for b in s.body if isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef))
                         and b.name == "__init__"), None)
            dc = _is_dataclass(s)
            info.classes[s.name] = ClassInfo(
                bases=tuple(self.qualify(b) for b in s.bases),
                dataclass=dc,
                init=None if init is None else signature_of(init, method=True),
                fields=_fields(s) if dc else None,
                methods=tuple(sorted({b.name for b in s.body if isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef))
                                      and _public(b.name) and not b.name.startswith("__")})),
            )
        elif isinstance(s, ast.ImportFrom):
            src = _resolve_relative(info, s.level, s.module) if s.level else (s.module or "")
            for alias in s.names:
                if alias.name == "*":
                    info.stars.append(src)
                    continue
                local = alias.asname or alias.name
                self.imports[local] = f"{src}.{alias.name}"
                self.bind(local, "import", f"{src}.{alias.name}")
        elif isinstance(s, ast.Import):
            for alias in s.names:
                if alias.asname:
                    self.imports[alias.asname] = alias.name
                    self.bind(alias.asname, "import", alias.name)
                else:
                    self.imports.setdefault(alias.name.split(".")[0], alias.name.split(".")[0])
        elif isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name) and isinstance(t, (ast.Name, ast.Tuple, ast.List)):
                        self.bind(n.id, "var")
                if isinstance(t, ast.Name) and t.id == "_import_structure" and isinstance(s.value, ast.Dict):
                    for k, v in zip(s.value.keys, s.value.values, strict=True):
                        if isinstance(k, ast.Constant):
                            self.lazy_add(k.value, v)
                if (isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == "_import_structure"
                        and isinstance(t.slice, ast.Constant)):
                    self.lazy_add(t.slice.value, s.value)
                if isinstance(t, ast.Name) and t.id == "__all__" and isinstance(s.value, (ast.List, ast.Tuple)):
                    info.all = (info.all or []) + [e.value for e in s.value.elts if isinstance(e, ast.Constant)]
        elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            # _import_structure["x"].extend([...]) / .append("y"); __all__.extend / += handled above
            f = s.value.func
            if (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Subscript)
                    and isinstance(f.value.value, ast.Name) and f.value.value.id == "_import_structure"
                    and isinstance(f.value.slice, ast.Constant) and s.value.args):
                arg = s.value.args[0]
                if f.attr == "extend":
                    self.lazy_add(f.value.slice.value, arg)
                elif f.attr == "append":
                    self.lazy_add(f.value.slice.value, ast.List(elts=[arg]))
        elif isinstance(s, ast.If):
            self.read(s.body)
            self.read(s.orelse)
        elif isinstance(s, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            self.read(s.body)
            for h in s.handlers:
                self.read(h.body)
            self.read(s.orelse)
            self.read(s.finalbody)
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            self.read(s.body)

    def finish(self) -> None:
        base = self.info.name if self.info.is_package else self.info.name.rsplit(".", 1)[0]
        for key, names in self.lazy.items():
            sub = f"{base}.{key}"
            for n in names:
                if n not in self.info.names or self.info.names[n][0] == "var":
                    self.bind(n, "lazy", f"{sub}.{n}")
        for n in self.info.all or ():
            if n not in self.info.names:
                self.bind(n, "var")


def read_module(path: str, source: str | bytes, package: str) -> ModuleInfo | None:
    """The API of one module (path relative to the folder holding the package); None if it does not parse."""
    named = module_name(path)
    if named is None:
        return None
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    info = ModuleInfo(*named)
    reader = _ModuleReader(info, package)
    reader.read(tree.body)
    reader.finish()
    return info


def expand_stars(modules: dict[str, ModuleInfo]) -> None:
    """Bind what `from x import *` brings in, for x inside the same package (to a fixed point). A name that
    arrives through several star imports (transformers: ``transformers`` <- ``models`` <- ``models.llama`` <-
    ``modeling_llama``) is bound straight to its first module outside the chain, so the chain does not depend on
    the intermediate packages' names being kept."""
    starred: set[tuple[str, str]] = set()
    changed = True
    while changed:
        changed = False
        for info in modules.values():
            for src in info.stars:
                other = modules.get(src)
                if other is None:
                    continue
                exported = other.all if other.all is not None else [n for n in other.names if not n.startswith("_")]
                for n in exported:
                    if n not in info.names:
                        # a name only listed (its module read for __all__ only) stays listed: no chain to follow
                        listed = other.names.get(n, ("", None))[0] == "listed"
                        info.names[n] = ("listed", None) if listed else ("import", f"{src}.{n}")
                        starred.add((info.name, n))
                        changed = True
    for module, n in starred:
        kind, target = modules[module].names[n]
        seen = 0
        while kind == "import" and target and seen < 50:
            src, _, name = target.rpartition(".")
            if (src, name) not in starred:
                break
            kind, target = modules[src].names[name]
            seen += 1
        modules[module].names[n] = (kind, target)


_ALL = re.compile(r"^__all__\s*(?::[^=]*)?=\s*[\[(]", re.M)


def read_names(path: str, source: str | bytes) -> ModuleInfo | None:
    """The cheap reading of a module: only its literal ``__all__`` (found with a regular expression, only that
    statement parsed), each name bound as ``listed`` (exported; what it is was not read). The module is ``opaque``
    either way: it may bind more than it lists (a class left out of ``__all__`` is still importable), so the names
    serve star imports and `exports`, never a verdict that a name is missing."""
    named = module_name(path)
    if named is None:
        return None
    text = source.decode("utf-8", "replace") if isinstance(source, bytes) else source
    info = ModuleInfo(*named, opaque=True)
    m = _ALL.search(text)
    names: list[str] | None = None
    if m:
        close = "]" if text[m.end() - 1] == "[" else ")"
        end = text.find(close, m.end())
        try:
            value = ast.literal_eval(text[m.end() - 1: end + 1]) if end >= 0 else None
        except (SyntaxError, ValueError):
            value = None
        if isinstance(value, (list, tuple)) and all(isinstance(n, str) for n in value):
            names = list(value)
    if names is None:
        return info
    info.all = names
    for n in names:
        info.names[n] = ("listed", None)
    return info


def read_package(files: Mapping[str, str | bytes], package: str,
                 include: Callable[[str], bool] | None = None,
                 names: Callable[[str], bool] | None = None,
                 listed: bool = False) -> dict[str, ModuleInfo]:
    """Every module of `package` in `files` (path relative to site-packages -> source), keyed by dotted name.

    Three depths, so a big package (transformers: thousands of modules) stays compact: modules `include` accepts
    (default: all) are read in full; other modules `names` accepts are read for ``__all__`` only
    (:func:`read_names`; a package's ``__init__`` is always read in full, it is small and holds the re-exports);
    with `listed`, every other module is recorded as existing and ``opaque``."""
    modules: dict[str, ModuleInfo] = {}
    for path, source in files.items():
        named = module_name(path)
        if named is None or not (named[0] == package or named[0].startswith(package + ".")):
            continue
        if include is None or include(named[0]):
            info = read_module(path, source, package)
        elif names is not None and names(named[0]):
            info = read_module(path, source, package) if named[1] else read_names(path, source)
        elif listed:
            info = ModuleInfo(*named, opaque=True)
        else:
            continue
        if info is not None:
            modules[info.name] = info
    expand_stars(modules)
    return modules
