"""The static API check of one source text against one TRL release, from the atlas (nothing is imported or run).

What is checked (each at its line and column in the text as it is):

* every absolute import from TRL: ``import trl.x.y``, ``from trl.x import A`` - the module must exist in the target
  and export ``A`` (``missing-module``, ``missing-name``); relative imports (``from .trl import X``, a vendored copy)
  are not TRL;
* attribute chains on a name bound to a TRL module (``trl.PPOTrainer``, ``t.utils.foo`` after
  ``import trl.trainer as t``), up to the first attribute that is not a module (``missing-name``);
* ``from compat.trl import NAME`` / ``from compat.losses import NAME``: NAME must be one trl-compat exports
  (``missing-name``);
* calls of a TRL function or class (constructor): every keyword must be accepted (:meth:`Atlas.accepts`:
  a parameter, a ``@deprecate_kwarg`` alias, a key the body reads out of ``**kwargs``, or forwarded through
  ``super().__init__(**kwargs)`` to a constructor that takes it; a trainer's ``**kwargs`` that ends in
  ``transformers.Trainer.__init__`` accepts nothing more) (``unknown-keyword``); no more positional arguments than
  it takes (``too-many-positional``); every required parameter given (``missing-argument``, only for calls
  without ``*args``/``**kwargs`` splats). ``super().__init__(...)`` in a subclass of a TRL class and
  ``Base.__init__(self, ...)`` count as calls of the base's constructor.
* option values a release rejects though the field stays (``VALUES_GONE``: ``optim="adamw_hf"`` on transformers
  4.50+), wherever a literal sets the field: a keyword of a ``TrainingArguments`` / TRL config call or of
  ``dict(...)``, a class-body default (``optim: str = field(default="adamw_hf")``, a script's argument dataclass),
  an assignment to ``x.optim`` or ``x["optim"]``, a ``{"optim": ...}`` key, either branch of a conditional there; only
  in a module that imports transformers or TRL (``removed-value``; the rule ``removed-optim-adamw-hf`` marks the same
  sites).
* reads of a field TRL's script dataclasses (``ModelConfig``, ``ScriptArguments``, ...) lost, on a name provably
  holding an instance: ``model_config.torch_dtype`` after ``TrlParser((..., ModelConfig)).parse_args_and_config()``
  (``missing-field``; the resolution of the rules, :mod:`migrations.kinds.script_fields`).

Names are resolved by scope, as Python does (function scopes see enclosing functions and the module, not class
bodies; ``global``/``nonlocal``), flow-insensitively: a name is TRL's only if every binding of it in its scope is
an import of the same TRL name. So a local ``class ORPOTrainer``, a parameter named ``trl``, ``PPOTrainer = object``
as an ImportError fallback, or a string that mentions ``tokenizer=`` are never flagged; nor is a call in an ``except
TypeError:`` (``Exception``, bare) handler whose ``try`` body calls the same callable as the target takes it (a
repository's shim across releases: ``try: GRPOTrainer(processing_class=tok)`` / ``except TypeError:
GRPOTrainer(tokenizer=tok)``). Not followed: ``from trl import *`` (the names it brings are unknown to the check),
``getattr(trl, name)``, objects passed around (a trainer instance's methods), calls of a TRL class's methods.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from packaging.version import Version

from compat._shadow import own_first

own_first("migrations")  # a repository's own migrations/ package must not shadow the atlas

from migrations.atlas import Atlas, Event, Signature  # noqa: E402
from migrations.kinds import grammar  # noqa: E402

from compat._exports import EXPORTS as COMPAT_EXPORTS, trl_paths  # noqa: E402
from compat.check.reference import reference_signature  # noqa: E402

COMPAT_TRL = "compat.trl"

ROOT = "trl"
#: What each checked package is called in messages.
LABELS = {"trl": "TRL", "transformers": "transformers", "peft": "peft", "accelerate": "accelerate"}
#: `from_pretrained` keywords that a release rejects, read in the wheels (these methods take `**kwargs`, which the
#: atlas does not follow): keyword -> (first release without it, its successor).
FROM_PRETRAINED_GONE = {"transformers": {"use_auth_token": ("5.0.0", "token")}}
#: values of a `TrainingArguments` field that a release rejects though the field stays (the atlas holds signatures,
#: not enum members), read in the wheels: (field, value) -> (package, first release without it, what to do).
#: `OptimizerNames.ADAMW_HF` is in transformers 4.49.0's `training_args.py` and not in 4.50.0's, where
#: `TrainingArguments(optim="adamw_hf")` raises ValueError; its optimizer was transformers' own `AdamW` (rule
#: `removed-adamw`), whose update is not torch's.
VALUES_GONE = {("optim", "adamw_hf"): (
    "transformers", "4.50.0",
    '"adamw_torch" is torch.optim.AdamW, a different update (epsilon after the bias correction, decay before the '
    "step): choose it, or keep 4.49's optimizer: Trainer(optimizer_cls_and_kwargs=(compat.trl.AdamW, "
    '{"lr": args.learning_rate, "betas": (args.adam_beta1, args.adam_beta2), "eps": args.adam_epsilon}))')}


@dataclass(frozen=True)
class Problem:
    line: int
    column: int  # 1-based
    code: str  # missing-module | missing-name | unknown-keyword | too-many-positional | missing-argument |
    # missing-field
    name: str  # the TRL name concerned, e.g. "trl.SFTTrainer" or "trl.SFTTrainer(max_seq_length=)"
    message: str
    since: str | None  # the release where it changed (removed, moved, renamed), when the atlas knows
    cell: int | None = None

    def to_json(self) -> dict:
        return {"line": self.line, "column": self.column, "code": self.code, "name": self.name,
                "message": self.message, "since": self.since, "cell": self.cell}


# ----------------------------------------------------------------------------------------------------- scopes

@dataclass
class _Scope:
    kind: str  # module | function | class
    parent: _Scope | None
    node: ast.AST | None = None
    bindings: dict[str, list[str | None]] = field(default_factory=dict)  # name -> TRL qualname or None (other)
    globals: set[str] = field(default_factory=set)
    nonlocals: set[str] = field(default_factory=set)

    def bind(self, name: str, qual: str | None) -> None:
        self.bindings.setdefault(name, []).append(qual)


def _is_trl(module: str | None, roots: frozenset[str] = frozenset({ROOT})) -> bool:
    """Whether `module` is (under) one of the checked packages."""
    return bool(module) and module.split(".")[0] in roots  # type: ignore[union-attr]


def _chain(node: ast.expr) -> tuple[ast.Name, list[ast.Attribute]] | None:
    """`a.b.c` -> (Name a, [Attribute .b, Attribute .c]); None if the chain does not start with a name."""
    attrs: list[ast.Attribute] = []
    while isinstance(node, ast.Attribute):
        attrs.append(node)
        node = node.value
    if isinstance(node, ast.Name):
        return node, attrs[::-1]
    return None


class _Collector(ast.NodeVisitor):
    """Builds the scope tree (bindings) and records imports, attribute chains and calls with their scope."""

    def __init__(self, roots: frozenset[str] = frozenset({ROOT})) -> None:
        self.roots = roots
        self.module = _Scope("module", None)
        self.scope = self.module
        self.imports: list[tuple[ast.stmt, _Scope]] = []
        self.chains: list[tuple[ast.Attribute, _Scope]] = []
        self.calls: list[tuple[ast.Call, _Scope]] = []
        self._in_chain: set[int] = set()

    # scopes
    def _push(self, kind: str, node: ast.AST) -> _Scope:
        scope = _Scope(kind, self.scope, node)
        self.scope = scope
        return scope

    def _pop(self, scope: _Scope) -> None:
        self.scope = scope.parent  # type: ignore[assignment]

    def _arguments(self, args: ast.arguments) -> None:
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
            if a is not None:
                self.scope.bind(a.arg, None)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for d in node.decorator_list:
            self.visit(d)
        for d in (*node.args.defaults, *[d for d in node.args.kw_defaults if d is not None]):
            self.visit(d)
        for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs, node.args.vararg, node.args.kwarg):
            if a is not None and a.annotation is not None:
                self.visit(a.annotation)
        if node.returns is not None:
            self.visit(node.returns)
        self.scope.bind(node.name, None)
        scope = self._push("function", node)
        self._arguments(node.args)
        for stmt in node.body:
            self.visit(stmt)
        self._pop(scope)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_Lambda(self, node: ast.Lambda) -> None:
        for d in (*node.args.defaults, *[d for d in node.args.kw_defaults if d is not None]):
            self.visit(d)
        scope = self._push("function", node)
        self._arguments(node.args)
        self.visit(node.body)
        self._pop(scope)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for d in (*node.decorator_list, *node.bases, *node.keywords):
            self.visit(d)
        self.scope.bind(node.name, None)
        scope = self._push("class", node)
        for stmt in node.body:
            self.visit(stmt)
        self._pop(scope)

    def _comprehension(self, node: ast.AST, elements: list[ast.expr]) -> None:
        generators = node.generators  # type: ignore[attr-defined]
        self.visit(generators[0].iter)  # evaluated in the enclosing scope
        scope = self._push("function", node)
        for i, gen in enumerate(generators):
            if i:
                self.visit(gen.iter)
            self.visit(gen.target)
            for cond in gen.ifs:
                self.visit(cond)
        for e in elements:
            self.visit(e)
        self._pop(scope)

    def visit_ListComp(self, node: ast.ListComp) -> None:
        self._comprehension(node, [node.elt])

    visit_SetComp = visit_GeneratorExp = visit_ListComp  # type: ignore[assignment]

    def visit_DictComp(self, node: ast.DictComp) -> None:
        self._comprehension(node, [node.key, node.value])

    # bindings
    def visit_Global(self, node: ast.Global) -> None:
        if self.scope.parent is not None:  # `global x` at module level is legal and means nothing
            self.scope.globals.update(node.names)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self.scope.nonlocals.update(node.names)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self.scope.bind(node.id, None)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        scope = self.scope
        while scope.kind == "function" and isinstance(scope.node, (ast.ListComp, ast.SetComp, ast.GeneratorExp,
                                                                   ast.DictComp)):
            scope = scope.parent  # type: ignore[assignment]
        scope.bind(node.target.id, None)
        self.visit(node.value)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.scope.bind(node.name, None)
        self.generic_visit(node)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.name:
            self.scope.bind(node.name, None)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name:
            self.scope.bind(node.name, None)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        if node.rest:
            self.scope.bind(node.rest, None)
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self.scope.bind(alias.asname, alias.name if _is_trl(alias.name, self.roots) else None)
            else:
                head = alias.name.split(".")[0]
                self.scope.bind(head, head if _is_trl(alias.name, self.roots) else None)
        if any(_is_trl(a.name, self.roots) for a in node.names):
            self.imports.append((node, self.scope))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        trl = node.level == 0 and _is_trl(node.module, self.roots)
        bound = trl or (node.level == 0 and node.module == COMPAT_TRL)  # compat.trl's calls are checked too
        for alias in node.names:
            if alias.name == "*":
                continue
            self.scope.bind(alias.asname or alias.name, f"{node.module}.{alias.name}" if bound else None)
        if trl:
            self.imports.append((node, self.scope))

    # uses
    def visit_Attribute(self, node: ast.Attribute) -> None:
        if id(node) not in self._in_chain:
            chain = _chain(node)
            if chain is not None:
                self.chains.append((node, self.scope))
                self._in_chain.update(id(a) for a in chain[1])
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        self.calls.append((node, self.scope))
        self.generic_visit(node)


#: what an `except` must catch for its body to be a fallback of a call that raises TypeError
_TYPE_ERROR_CATCHERS = frozenset({"TypeError", "Exception", "BaseException"})


def _type_error_fallbacks(tree: ast.AST) -> dict[int, ast.Try]:
    """The calls inside an `except TypeError:` (or `Exception`, bare `except:`) handler, by id -> their `try`
    statement: `try: GRPOTrainer(processing_class=tok, ...)` / `except TypeError: GRPOTrainer(tokenizer=tok, ...)`,
    a repository's own shim across TRL releases."""
    out: dict[int, ast.Try] = {}
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            continue
        for handler in node.handlers:
            kind = handler.type
            names = [kind] if kind is None or not isinstance(kind, ast.Tuple) else list(kind.elts)
            if not any(n is None or (isinstance(n, ast.Name) and n.id in _TYPE_ERROR_CATCHERS) for n in names):
                continue
            for stmt in handler.body:
                out.update((id(n), node) for n in ast.walk(stmt) if isinstance(n, ast.Call))
    return out


def _lookup(scope: _Scope, name: str) -> str | None:
    """The TRL qualified name `name` refers to in `scope`, or None (not TRL, ambiguous, or unbound)."""
    current: _Scope | None = scope
    first = True
    while current is not None:
        if name in current.globals:
            current = _module_of(current)
            first = False
            continue
        if name in current.nonlocals:
            current = current.parent
            first = False
            continue
        if (first or current.kind != "class") and name in current.bindings:
            quals = set(current.bindings[name])
            return quals.pop() if len(quals) == 1 else None
        current = current.parent
        first = False
    return None


def _bound(scope: _Scope, name: str) -> bool:
    """Whether `name` has a binding in `scope` or a scope it sees (else it is a builtin)."""
    current: _Scope | None = scope
    while current is not None:
        if name in current.bindings and (current is scope or current.kind != "class"):
            return True
        current = current.parent
    return False


def _module_of(scope: _Scope) -> _Scope:
    while scope.parent is not None:
        scope = scope.parent
    return scope


def _enclosing_class(scope: _Scope) -> _Scope | None:
    """The class whose method body `scope` is (for `super().__init__`)."""
    if scope.kind == "function" and isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        parent = scope.parent
        if parent is not None and parent.kind == "class":
            return parent
    return None


def callee_of(call: ast.Call, scope: _Scope) -> tuple[str, int] | None:
    """(qualified name in a checked package, positional arguments that are `self`) of what a call calls, or None."""
    func = call.func
    if (isinstance(func, ast.Attribute) and func.attr == "__init__" and isinstance(func.value, ast.Call)
            and isinstance(func.value.func, ast.Name) and func.value.func.id == "super"):
        cls = _enclosing_class(scope)
        if cls is None or not isinstance(cls.node, ast.ClassDef) or not cls.node.bases:
            return None
        chain = _chain(cls.node.bases[0])
        if chain is None:
            return None
        base = _lookup(cls.parent, chain[0].id) if cls.parent else None  # type: ignore[arg-type]
        return (".".join([base, *(a.attr for a in chain[1])]), 0) if base else None
    chain = _chain(func)
    if chain is None:
        return None
    head, attrs = chain
    qual = _lookup(scope, head.id)
    if qual is None:
        return None
    names = [a.attr for a in attrs]
    if names and names[-1] == "__init__":
        return ".".join([qual, *names[:-1]]), 1
    return ".".join([qual, *names]), 0


def value_sites(tree: ast.AST, keys: set[tuple[str, str]]) -> Iterator[tuple[ast.Constant, str, str]]:
    """(literal, field, value) for each literal that sets a field to one of `keys` (`VALUES_GONE`'s), in a module
    that imports transformers or TRL: a keyword of a call of `TrainingArguments` / a TRL config (resolved by scope)
    or of the builtin `dict`, a class-body default (`optim = ...`, `optim: str = field(default=...)`), an assignment
    to `x.optim` / `x["optim"]`, a `{"optim": ...}` key; a conditional expression there is followed into both
    branches. The rule `removed-optim-adamw-hf` marks the statements holding these."""
    from migrations.kinds.training_args import is_training_config

    c = _Collector(frozenset({ROOT, "transformers"}))
    c.visit(tree)
    if not c.imports:
        return
    fields = {key for key, _ in keys}
    scopes = {id(call): scope for call, scope in c.calls}

    def literals(field: str, value: ast.expr | None) -> Iterator[tuple[ast.Constant, str, str]]:
        if isinstance(value, ast.IfExp):
            yield from literals(field, value.body)
            yield from literals(field, value.orelse)
        elif isinstance(value, ast.Constant) and isinstance(value.value, str) and (field, value.value) in keys:
            yield value, field, value.value

    def default(value: ast.expr | None) -> ast.expr | None:
        if isinstance(value, ast.Call) and isinstance(value.func, (ast.Name, ast.Attribute)) and \
                (value.func.id if isinstance(value.func, ast.Name) else value.func.attr) == "field":
            return next((k.value for k in value.keywords if k.arg == "default"), None)
        return value

    def target_field(target: ast.expr) -> str | None:
        if isinstance(target, ast.Attribute):
            return target.attr
        if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant):
            return target.slice.value if isinstance(target.slice.value, str) else None
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and id(node) in scopes:
            if isinstance(node.func, ast.Name) and node.func.id == "dict":
                configures = not _bound(scopes[id(node)], "dict")
            else:
                callee = callee_of(node, scopes[id(node)])
                configures = callee is not None and is_training_config([callee[0]])
            if configures:
                for kw in node.keywords:
                    if kw.arg in fields:
                        yield from literals(kw.arg, kw.value)
        elif isinstance(node, ast.ClassDef):
            for stmt in node.body:
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id in fields:
                    yield from literals(stmt.target.id, default(stmt.value))
                elif isinstance(stmt, ast.Assign):
                    for t in stmt.targets:
                        if isinstance(t, ast.Name) and t.id in fields:
                            yield from literals(t.id, stmt.value)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                name = target_field(t)
                if name in fields:
                    yield from literals(name, node.value)
        elif isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                if isinstance(k, ast.Constant) and k.value in fields:
                    yield from literals(k.value, v)


# ----------------------------------------------------------------------------------------------------- checking

class Checker:
    """Checks source texts against one TRL release (and the transformers release the atlas pairs with it), and,
    with `libraries` (package -> release: transformers, peft, accelerate), those packages' imports and calls too."""

    def __init__(self, target: str, *, transformers: str | None = None, atlas: Atlas | None = None,
                 libraries: dict[str, str] | None = None) -> None:
        self.atlas = atlas or Atlas.load("trl")
        self.target = self.atlas.release(target)
        self.transformers = (transformers or (libraries or {}).get("transformers")
                             or self.atlas.companion_release(self.target))
        self.packages: dict[str, tuple[Atlas, str]] = {ROOT: (self.atlas, self.target)}
        for package, release in (libraries or {}).items():
            other = Atlas.load(package)
            self.packages[package] = (other, other.release(release))
        self.roots = frozenset(self.packages)
        self._sigs: dict[str, Signature | None] = {}
        self._has: dict[str, bool] = {}
        self._history: dict[tuple[str, str | None], list[Event]] = {}
        self._accepts: dict[tuple[str, str], str | None] = {}
        self._compat_sigs: dict[str, tuple[str, str] | None] = {}  # compat.trl name -> (release, TRL qualname)

    def _of(self, qual: str) -> tuple[Atlas, str]:
        """(atlas, target release) of the package `qual` belongs to."""
        return self.packages[qual.split(".")[0]]

    def _label(self, qual: str) -> str:
        package = qual.split(".")[0]
        return f"{LABELS.get(package, package)} {self.packages[package][1]}"

    def has_module(self, qual: str) -> bool:
        atlas, release = self._of(qual)
        return atlas.has_module(release, qual)

    # cached atlas queries
    def has(self, qual: str) -> bool:
        if qual not in self._has:
            atlas, release = self._of(qual)
            last = qual.rsplit(".", 1)[-1]
            # the atlas leaves out private variables (`transformers._import_structure`): never "missing"
            private = last.startswith("_") and not last.endswith("__") and not atlas.has_module(release, qual)
            self._has[qual] = private or atlas.has(release, qual)
        return self._has[qual]

    def signature(self, qual: str) -> Signature | None:
        if qual not in self._sigs:
            atlas, release = self._of(qual)
            self._sigs[qual] = atlas.signature(release, qual, transformers=self.transformers
                                               if atlas is self.atlas else None)
        return self._sigs[qual]

    def history(self, qual: str, keyword: str | None = None) -> list[Event]:
        key = (qual, keyword)
        if key not in self._history:
            self._history[key] = self._of(qual)[0].history(qual, keyword)
        return self._history[key]

    def accepts(self, qual: str, keyword: str) -> str | None:
        key = (qual, keyword)
        if key not in self._accepts:
            atlas, release = self._of(qual)
            self._accepts[key] = atlas.accepts(release, qual, keyword, transformers=self.transformers
                                               if atlas is self.atlas else None)
        return self._accepts[key]

    def _gone(self, qual: str, keyword: str | None = None) -> tuple[str | None, str]:
        """(since, explanation) for something the target lacks, from the atlas history."""
        atlas, target = self._of(qual)
        events = self.history(qual, keyword)
        target_v = atlas._index(target)
        past = [e for e in events if atlas._index(e.release) <= target_v]
        future = [e for e in events if atlas._index(e.release) > target_v]
        if not events:
            first, last = atlas.releases()[0], atlas.releases()[-1]
            return None, f"no {LABELS.get(atlas.package, atlas.package)} release from {first} to {last} has it"
        last = past[-1] if past else None
        if last is None or last.kind == "added":
            added = next((e for e in future if e.kind in ("added", "renamed")), None)
            return None, f"added in {added.release}" if added else "not in this release"
        if last.kind == "renamed":
            guess = " (probably)" if "heuristic" in last.detail else ""
            return last.release, f"renamed to `{last.to[0]}`{guess} in {last.release}"
        if last.kind == "moved" and keyword is not None:
            return last.release, f"moved to `{last.to[0]}` in {last.release}"
        if last.kind == "moved":
            if not last.to:
                return last.release, f"moved in {last.release}"
            gone = "" if self.has(last.to[0]) else f", gone by {target} too"
            return last.release, f"moved to `{last.to[0]}` in {last.release}{gone}"
        renamed = next((e for e in reversed(past) if e.kind == "renamed" and e.to), None)
        if renamed is not None:  # the deprecated alias went away later
            return last.release, f"renamed to `{renamed.to[0]}` in {renamed.release}, old name removed in {last.release}"
        return last.release, f"removed in {last.release}"

    def _where_now(self, qual: str, why: str) -> str:
        """Where the target exports a name of that spelling, if somewhere not already said."""
        atlas, target = self._of(qual)
        name = qual.rsplit(".", 1)[-1]
        found = [q for q in atlas.moved_to(target, name, exclude=qual.rsplit(".", 1)[0])
                 if f"`{q}`" not in why]
        if not found:
            return ""
        return f"; {target} has " + ", ".join(f"`{q}`" for q in found[:2])

    def check(self, text: str, *, cell: int | None = None) -> list[Problem]:
        """Every problem in one Python source (raises SyntaxError / RecursionError if it does not parse with the
        running interpreter's grammar nor, for f-strings, with a newer one: `migrations.kinds.grammar`)."""
        tree = grammar.parse(text)
        collector = _Collector(self.roots)
        collector.visit(tree)
        problems: list[Problem] = []
        problems.extend(self._imports(collector, cell))
        problems.extend(self._chains(collector, cell))
        problems.extend(self._calls(collector, cell, _type_error_fallbacks(tree)))
        problems.extend(self._compat_imports(tree, cell))
        problems.extend(self._script_fields(text, cell))
        problems.extend(self._training_fields(text, cell))
        problems.extend(self._removed_values(tree, text, cell))
        problems.sort(key=lambda p: (p.line, p.column, p.code, p.name))
        return problems

    def _problem(self, node: ast.AST, code: str, name: str, message: str, since: str | None,
                 cell: int | None) -> Problem:
        return Problem(node.lineno, node.col_offset + 1, code, name, message, since, cell)  # type: ignore[attr-defined]

    def _missing(self, node: ast.AST, qual: str, cell: int | None, module: bool = False,
                 names: Sequence[str] = ()) -> Problem:
        """`names`: what an import takes from the missing module `qual` (where the target has those is said too)."""
        since, why = self._gone(qual)
        if module or self._of(qual)[0].is_module(qual):
            elsewhere = "".join(self._where_now(f"{qual}.{name}", why) for name in names if name != "*")
            return self._problem(node, "missing-module", qual,
                                 f"{self._label(qual)} has no module `{qual}`: {why}{elsewhere}", since, cell)
        return self._problem(node, "missing-name", qual,
                             f"{self._label(qual)} has no `{qual}`: {why}{self._where_now(qual, why)}", since, cell)

    def _imports(self, c: _Collector, cell: int | None) -> Iterator[Problem]:
        for node, _scope in c.imports:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if _is_trl(alias.name, self.roots) and not self.has_module(alias.name):
                        yield self._missing(node, alias.name, cell, module=True)
                continue
            assert isinstance(node, ast.ImportFrom)
            module = node.module or ""
            if not self.has_module(module):
                yield self._missing(node, module, cell, module=True, names=[a.name for a in node.names])
                continue
            for alias in node.names:
                if alias.name == "*":
                    continue
                qual = f"{module}.{alias.name}"
                if not self.has(qual):
                    yield self._missing(alias if hasattr(alias, "lineno") else node, qual, cell)

    def _script_fields(self, text: str, cell: int | None) -> Iterator[Problem]:
        """Reads of a field the target's script dataclass lacks (`model_config.torch_dtype` on TRL 0.27+) on a name
        provably holding an instance (a parser's output or a call; the resolution the rules use,
        `migrations.kinds.script_fields`). libcst parses only the files naming such a class and such a field."""
        if "ModelConfig" not in text and "ScriptArguments" not in text:
            return
        from migrations.kinds.script_fields import SCRIPT_CLASSES, fix_hint, script_field_reads

        for line, column, gone in script_field_reads(text):
            path = SCRIPT_CLASSES[gone.cls][0]
            if not self.has(path) or gone.field in (self.atlas.config_fields(self.target, path) or {}):
                continue
            since, why = self._gone(path, gone.field)
            yield Problem(line, column, "missing-field", f"{path}.{gone.field}",
                          f"{gone.cls} in {self._label(path)} has no field `{gone.field}` ({why}): "
                          f"{fix_hint(gone)}", since, cell)

    def _training_fields(self, text: str, cell: int | None) -> Iterator[Problem]:
        """Uses of a field the target's training config lacks (`training_args.max_seq_length` on a parsed SFTConfig,
        `config.sft_model_path` on an RLOOConfig) on a name provably holding an instance
        (`migrations.kinds.config_reads`: TRL's own fields only; those of TrainingArguments are the stack's)."""
        from migrations.kinds.config_reads import training_field_reads

        for line, column, path, gone in training_field_reads(text, self.target):
            since, why = self._gone(path, gone.field)
            yield Problem(line, column, "missing-field", f"{path}.{gone.field}",
                          f"{gone.cls} in {self._label(path)} has no field `{gone.field}` ({why}; last in "
                          f"{gone.last}): an AttributeError where it is read, and the parser rejects "
                          f"--{gone.field}", since, cell)

    def _removed_values(self, tree: ast.AST, text: str, cell: int | None) -> Iterator[Problem]:
        """Literals that set a field to a value the target's library rejects (`VALUES_GONE`, `value_sites`)."""
        if not any(value in text for _field, value in VALUES_GONE):
            return
        releases = {package: release for package, (_atlas, release) in self.packages.items()}
        releases.setdefault("transformers", self.transformers)  # the TRL target's companion unless one is given
        gone = {key: entry for key, entry in VALUES_GONE.items() if entry[0] in releases
                and Version(releases[entry[0]]) >= Version(entry[1])}
        for node, key, value in value_sites(tree, set(gone)):
            package, since, hint = gone[(key, value)]
            release = releases[package]
            yield self._problem(node, "removed-value", f"{package}.TrainingArguments({key}={value!r})",
                                f"{LABELS[package]} {release} has no {key}={value!r} (TrainingArguments raises "
                                f"ValueError): removed in {since}; {hint}", since, cell)

    def _compat_imports(self, tree: ast.AST, cell: int | None) -> Iterator[Problem]:
        """`from compat.trl import NAME` (and `compat.losses`): NAME must be one trl-compat exports (what migrated
        code imports; read from `compat._exports`, so nothing is imported or resolved)."""
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or node.level or node.module not in COMPAT_EXPORTS:
                continue
            exported = COMPAT_EXPORTS[node.module]
            for alias in node.names:
                if alias.name != "*" and alias.name not in exported:
                    yield self._problem(alias, "missing-name", f"{node.module}.{alias.name}",
                                        f"trl-compat has no `{node.module}.{alias.name}` ({node.module} provides "
                                        f"{len(exported)} names, its `__all__`)", None, cell)

    def _chains(self, c: _Collector, cell: int | None) -> Iterator[Problem]:
        for node, scope in c.chains:
            head, attrs = _chain(node)  # type: ignore[misc]
            qual = _lookup(scope, head.id)
            if qual is None or qual.startswith(COMPAT_TRL + ".") or not self.has_module(qual):
                continue  # not TRL (compat.trl's names are held at the import), or a class/function
            for attr in attrs:
                if attr.attr == "__init__":
                    break
                nxt = f"{qual}.{attr.attr}"
                if self.has_module(nxt):
                    qual = nxt
                    continue
                if not self.has(nxt):
                    yield self._missing(attr, nxt, cell)
                break

    def _calls(self, c: _Collector, cell: int | None,
               fallbacks: dict[int, ast.Try] | None = None) -> Iterator[Problem]:
        callees = {id(call): callee_of(call, scope) for call, scope in c.calls}
        for call, scope in c.calls:
            callee = callees[id(call)]
            if callee is None:
                continue
            qual, skip = callee
            guarded = (fallbacks or {}).get(id(call))
            if guarded is not None and self._passes_in(guarded, qual, c, callees, cell):
                continue  # an `except TypeError:` retry of a call the try body makes as the target takes it
            if qual.startswith(COMPAT_TRL + "."):
                yield from self._compat_call(call, qual, skip, cell)
                continue
            if qual.endswith(".from_pretrained"):
                yield from self._from_pretrained(call, qual, cell)
                continue
            if not self.has(qual):
                continue  # reported at the import or attribute
            sig = self.signature(qual)
            if sig is None:
                continue
            yield from self._call(call, qual, sig, skip, cell)

    def _passes_in(self, node: ast.Try, qual: str, c: _Collector, callees: dict[int, tuple[str, int] | None],
                   cell: int | None) -> bool:
        """The try body of `node` calls `qual` in a way the target accepts (then the same call in its `except
        TypeError:` handler, an older signature tried where the new one fails, never runs on the target)."""
        inside = {id(n) for stmt in node.body for n in ast.walk(stmt)}
        for call, _scope in c.calls:
            callee = callees[id(call)]
            if id(call) not in inside or callee is None or callee[0] != qual:
                continue
            sig = self.signature(qual) if self.has(qual) else None
            if sig is not None and not list(self._call(call, qual, sig, callee[1], cell)):
                return True
        return False

    def _from_pretrained(self, call: ast.Call, qual: str, cell: int | None) -> Iterator[Problem]:
        """`from_pretrained` keywords the target rejects (FROM_PRETRAINED_GONE; peft's classes forward them)."""
        package = qual.split(".")[0]
        table = FROM_PRETRAINED_GONE.get("transformers" if package == "peft" else package)
        if not table or "transformers" not in self.packages:
            return
        _atlas, release = self.packages["transformers"]
        for kw in call.keywords:
            gone = table.get(kw.arg or "")
            if gone and Version(release) >= Version(gone[0]):
                yield self._problem(kw, "unknown-keyword", f"{qual}({kw.arg}=)",
                                    f"from_pretrained() in transformers {release} takes no `{kw.arg}=`: removed in "
                                    f"{gone[0]}, use `{gone[1]}=`", gone[0], cell)

    def _compat_call(self, call: ast.Call, qual: str, skip: int, cell: int | None) -> Iterator[Problem]:
        """A call of a `compat.trl` name held against the signature trl-compat gives it: TRL's own where the target
        has one of the name's TRL candidates, else the `reference_impl` class it resolves to (its own `__init__`,
        read from its source: `compat.check.reference`; XPO and Nash-MD are TRL 1.13's plus 1.0's `judge=`), else
        that of the last TRL release that had one (a reference without an `__init__` of its own, a config). Names
        that never were a TRL path the atlas knows (the copies of 0.x helpers) are not checked."""
        name = qual[len(COMPAT_TRL) + 1:]
        trl_quals = trl_paths(name)
        if not trl_quals:
            return
        if name not in self._compat_sigs:
            releases = self.atlas.releases()
            newest_first = releases[: releases.index(self.target) + 1][::-1]
            self._compat_sigs[name] = next(((r, q) for r in newest_first for q in trl_quals
                                            if self.atlas.has(r, q)), None)
        found = self._compat_sigs[name]
        if found is None:
            return
        release, trl_qual = found
        if release != self.target and (ref := reference_signature(name)) is not None:
            # the target has no TRL candidate: compat.trl resolves to reference_impl's class, held as it is written
            yield from self._call(call, qual, ref, skip, cell, release=("reference", ref.origin))
            return
        sig = self.atlas.signature(release, trl_qual, transformers=self.transformers)
        if sig is not None:
            yield from self._call(call, qual, sig, skip, cell, release=(release, trl_qual))

    def _call(self, call: ast.Call, qual: str, sig: Signature, skip: int, cell: int | None,
              release: tuple[str, str] | None = None) -> Iterator[Problem]:
        """The arguments of one call against `sig`: of the target's `qual`, or with `release` (release, TRL
        qualified name) the signature a `compat.trl` name keeps; `("reference", origin)` for a reference_impl
        class read from its source (no `**kwargs`: a keyword is accepted when it is a parameter)."""
        short = qual.rsplit(".", 1)[-1]
        reference = release is not None and release[0] == "reference"
        label = (self._label(qual) if release is None else "trl-compat (reference_impl's signature)" if reference
                 else f"trl-compat (TRL {release[0]}'s signature)")
        starred = any(isinstance(a, ast.Starred) for a in call.args)
        splat = any(k.arg is None for k in call.keywords)
        n_pos = len(call.args) - skip
        limit = sig.max_positional()
        if not starred and limit is not None and n_pos > limit:
            yield self._problem(call, "too-many-positional", qual,
                                f"{short}() takes at most {limit} positional argument(s) in {label}, "
                                f"{n_pos} given: pass the rest by keyword", None, cell)
        given = set()
        positional = [p for p in sig.params if p.kind in ("po", "pk")]
        given.update(p.name for p in positional[: max(n_pos, 0)])
        for kw in call.keywords:
            if kw.arg is None:
                continue
            given.add(kw.arg)
            if reference:
                if sig.param(kw.arg) is not None:
                    continue
                since, why, hint = None, f"not a parameter of `{release[1]}`", ""
            elif release is not None:
                if self.atlas.accepts(release[0], release[1], kw.arg, transformers=self.transformers) is not None:
                    continue
                since, why, hint = None, f"not a parameter of `{release[1]}` in TRL {release[0]}", ""
            elif self.accepts(qual, kw.arg) is not None:
                continue
            else:
                since, why = self._gone(qual, kw.arg)
                hint = self._config_hint(qual, kw.arg)
            yield self._problem(kw, "unknown-keyword", f"{qual}({kw.arg}=)",
                                f"{short}() in {label} takes no `{kw.arg}=`: {why}{hint}", since, cell)
        if starred or splat:
            return
        for p in sig.params:
            if p.required and p.name not in given and not (p.kind == "pk" and skip and p is positional[0]):
                yield self._problem(call, "missing-argument", qual,
                                    f"{short}() in {label} requires `{p.name}`", None, cell)

    def _config_hint(self, qual: str, keyword: str) -> str:
        """Where a trainer keyword lives now: its config class's field, if the config has one."""
        if qual.split(".")[0] != ROOT:
            return ""
        resolved = self.atlas.resolve(self.target, qual)
        short = qual.rsplit(".", 1)[-1]
        if resolved is None or not short.endswith("Trainer"):
            return ""
        config = qual[: -len("Trainer")] + "Config"
        if not self.has(config):
            return ""
        fields = self.atlas.config_fields(self.target, config, transformers=self.transformers) or {}
        if keyword in fields:
            return f"; set it on `{config.rsplit('.', 1)[-1]}({keyword}=...)` passed as `args=`"
        return ""
