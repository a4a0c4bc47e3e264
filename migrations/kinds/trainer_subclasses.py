"""A project's own subclasses of a library trainer class, in the file and in the module files it imports.

A rule that renames a keyword of a library constructor (`transformers.Trainer(tokenizer=)` -> `processing_class=`)
must also rename it where the project calls its own subclass (`class RewardTrainer(Trainer)`, then
`RewardTrainer(tokenizer=tok)`) and in the subclass's `super().__init__(tokenizer=...)`, but only when the keyword
still reaches the library's constructor unchanged: no class on the way defines an `__init__` that takes the keyword
itself or reads it by name out of `**kwargs`.

`subclasses_in(tree, bases, keyword)` answers that for one module (read with `ast`, nothing is imported), following
chains inside the module (`class B(A)`, `class A(Trainer)`); `imported_subclasses(tree, path, bases, keyword)` adds
the classes a module imports from the project's own module files: `from .trainer import X` (the file's folder),
`from utils import X` (beside the file) and `from pkg.sub.mod import X` (`pkg/` found in the file's folder or one
of its ancestors); `function_imported_subclass` answers for a name a function imports itself (`def main(): from
trainer import X`). Only single-base classes count: with several bases the method resolution order decides which
`__init__` a keyword reaches, which a static rule does not guess.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import GlobalScope, ScopeProvider

from migrations.kinds import grammar

__all__ = ["HF_TRAINER", "TRAINERS", "SelfAttributeAssigned", "ast_dotted", "bound_at_module_level",
           "function_imported_subclass", "import_bindings", "imported_subclasses", "own_trainer_bases", "own_trainers",
           "project_module_file", "subclasses_in", "trainer_base"]

#: How many folders above a file an absolute `from pkg.mod import X` is looked up in.
ANCESTORS = 6


def ast_dotted(node: ast.expr) -> str | None:
    """`a.b.c` for a chain of names and attributes (`ast`), None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = ast_dotted(node.value)
        return None if inner is None else f"{inner}.{node.attr}"
    return None


def import_bindings(tree: ast.Module, everywhere: bool = False) -> dict[str, str]:
    """Local name -> qualified name, for the module-level imports (`from m import A as B`, `import m as x`); with
    `everywhere`, for the absolute imports at any depth too (inside functions)."""
    out: dict[str, str] = {}
    for node in ast.walk(tree) if everywhere else tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for a in node.names:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    out[a.asname] = a.name
                else:
                    root = a.name.split(".")[0]
                    out[root] = root
    return out


def _takes_keyword(init: ast.FunctionDef | ast.AsyncFunctionDef, keyword: str) -> bool:
    """The `__init__` takes `keyword` as a parameter, or names it anywhere in its body (`kwargs.pop("tokenizer")`)."""
    params = {a.arg for a in (*init.args.posonlyargs, *init.args.args, *init.args.kwonlyargs)}
    if keyword in params:
        return True
    return any(isinstance(n, ast.Constant) and n.value == keyword for n in ast.walk(init))


def subclasses_in(tree: ast.Module, bases: frozenset[str], keyword: str | None,
                  imported: Mapping[str, str] | None = None) -> dict[str, str]:
    """Module-level classes of `tree` deriving (through one base each) from a class in `bases` (qualified names),
    whose `keyword=` reaches that base's constructor unchanged (every one, for `keyword=None`): class name -> the
    library base's qualified name. `imported`: classes the module imports from its own project files (local name ->
    library base), as bases too."""
    binds = import_bindings(tree)
    known: dict[str, str] = dict(imported or {})
    out: dict[str, str] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef) or len(node.bases) != 1:
            continue
        name = ast_dotted(node.bases[0])
        if name is None:
            continue
        head, _, rest = name.partition(".")
        qual = binds.get(head)
        qual = f"{qual}.{rest}" if qual and rest else qual
        base = qual if qual in bases else (out.get(name) or known.get(name))
        if base is None:
            continue
        init = next((f for f in node.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and f.name == "__init__"), None)
        if init is not None and keyword is not None and _takes_keyword(init, keyword):
            out.pop(node.name, None)
            continue
        out[node.name] = base
    return out


#: `_file_subclasses`' answers, by (path, bases, keyword)
_FILE_SUBCLASSES: dict[tuple[str, frozenset[str], str | None], dict[str, str]] = {}
#: parsed module files, by path, with the (mtime, size) they were read at
_TREES: dict[str, tuple[tuple[int, int], ast.Module | None]] = {}
#: the most entries either cache holds before it is emptied
_CACHE_LIMIT = 4096


def _module_tree(path: str) -> ast.Module | None:
    """The module file at `path`, parsed (once while the file stays the same); None when it cannot be read."""
    try:
        stat = Path(path).stat()
    except OSError:
        return None
    stamp = (stat.st_mtime_ns, stat.st_size)
    cached = _TREES.get(path)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    try:
        tree: ast.Module | None = grammar.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError, RecursionError):
        tree = None
    if len(_TREES) > _CACHE_LIMIT:
        _TREES.clear()
    _TREES[path] = (stamp, tree)
    return tree


def _project_imports(tree: ast.Module, path: str, bases: frozenset[str]) -> list[tuple[ast.ImportFrom, str]]:
    """The module-level `from ... import` statements of `tree` (the file at `path`) that name one of the project's
    own module files, each with that file's path."""
    out = []
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom):
            file = _project_module(path, stmt.module, stmt.level, bases)
            if file is not None:
                out.append((stmt, str(file)))
    return out


def _imported_from(edges: list[tuple[ast.ImportFrom, str]], answers: Mapping[str, Mapping[str, str]]
                   ) -> dict[str, str]:
    out: dict[str, str] = {}
    for stmt, file in edges:
        found = answers.get(file) or {}
        out.update((a.asname or a.name, found[a.name]) for a in stmt.names if a.name in found)
    return out


def _file_subclasses(path: str, bases: frozenset[str], keyword: str | None) -> dict[str, str]:
    """`subclasses_in` of the module file at `path`, its own imports from the project's module files followed too
    (KMnO4-zx/huanhuan-chat: `pet.sft.trainer`'s `Seq2SeqTrainerForChatGLM(PeftTrainer)`, `PeftTrainer` in
    `pet.core.trainer` on `Seq2SeqTrainer`).

    Every module file reachable from `path` through such imports is parsed once, and the answers are worked out
    together until none changes (a fixed point): an import cycle between project modules (a package whose
    `__init__` imports its submodules, which import the package) costs one more round, not a re-reading of the
    cycle from every file in it (Tongjilibo/bert4torch: 16,000 parses for one file before)."""
    key = (path, bases, keyword)
    if key in _FILE_SUBCLASSES:
        return _FILE_SUBCLASSES[key]
    trees: dict[str, ast.Module] = {}
    edges: dict[str, list[tuple[ast.ImportFrom, str]]] = {}
    todo = [path]
    while todo:
        file = todo.pop()
        if file in trees or file in edges:
            continue
        tree = _module_tree(file)
        edges[file] = [] if tree is None else _project_imports(tree, file, bases)
        if tree is not None:
            trees[file] = tree
            todo.extend(f for _, f in edges[file])
    answers: dict[str, dict[str, str]] = {f: {} for f in edges}
    for _ in range(len(trees) + 1):  # each round settles at least one more file's answer
        changed = False
        for file, tree in trees.items():
            found = subclasses_in(tree, bases, keyword, _imported_from(edges[file], answers))
            if found != answers[file]:
                answers[file] = found
                changed = True
        if not changed:
            break
    if len(_FILE_SUBCLASSES) + len(answers) > _CACHE_LIMIT:
        _FILE_SUBCLASSES.clear()
    _FILE_SUBCLASSES.update(((f, bases, keyword), found) for f, found in answers.items())
    return answers[path]


def _module_file(folder: Path, parts: list[str]) -> Path | None:
    candidate = folder.joinpath(*parts)
    for f in (candidate.with_suffix(".py"), candidate / "__init__.py"):
        if f.is_file():
            return f
    return None


def project_module_file(path: str, module: str | None, level: int) -> Path | None:
    """The project's own module file that `from <module> import ...` (`level` 0 or 1) in the file at `path` names:
    `.mod` beside the file, `pkg.mod` found in the file's folder or one of its ancestors; None when there is none."""
    if not module or level > 1:
        return None
    folder = Path(path).parent
    places = [folder] if level == 1 else [folder, *list(folder.parents)[:ANCESTORS]]
    for place in places:
        file = _module_file(place, module.split("."))
        if file is not None and file.resolve() != Path(path).resolve():
            return file
    return None


def _project_module(path: str, module: str | None, level: int, bases: frozenset[str]) -> Path | None:
    """The project's own module file that `from <module> import ...` (`level` leading dots) in the file at `path`
    names; None for a library (a root in `bases`) or a module the project does not hold."""
    if level > 1 or (level == 0 and not module):
        return None
    if level == 0 and module and module.split(".")[0] in {b.split(".")[0] for b in bases}:
        return None
    return project_module_file(path, module, level)


def _project_subclasses(path: str, module: str | None, level: int, bases: frozenset[str],
                        keyword: str | None) -> dict[str, str]:
    """What `from <module> import ...` (`level` leading dots) in the file at `path` can bring of `subclasses_in`'s
    classes: the project's own module file's accepted classes (name -> library base); nothing for a library (a root
    in `bases`) or a module the project does not hold."""
    file = _project_module(path, module, level, bases)
    return _file_subclasses(str(file), bases, keyword) if file is not None else {}


def imported_subclasses(tree: ast.Module, path: str | None, bases: frozenset[str],
                        keyword: str | None) -> dict[str, str]:
    """The classes `tree` (the module file at `path`) imports at module level from the project's own module files
    that `subclasses_in` accepts there: local name -> the library base. Libraries (a root in `bases`) are skipped."""
    if not path:
        return {}
    edges = _project_imports(tree, path, bases)
    return _imported_from(edges, {file: _file_subclasses(file, bases, keyword) for _, file in edges})


def function_imported_subclass(visitor: cst.MetadataDependent, name: cst.Name, path: str | None,
                               bases: frozenset[str], keyword: str | None) -> str | None:
    """The library base of the project subclass `name` is, where its one binding in scope is an import inside the
    function around it (`def main(): from trainer import Trainer`, dylanjoo/retrisound), taken from the project's
    own module file as `imported_subclasses` takes module-level ones; None otherwise (a module-level name, several
    bindings, a library import). `visitor` declares `ScopeProvider`."""
    scope = visitor.get_metadata(ScopeProvider, name, None)
    if path is None or scope is None or isinstance(scope, GlobalScope):
        return None
    assignments = [a for a in scope[name.value] if hasattr(a, "node")]
    if len(assignments) != 1 or isinstance(assignments[0].scope, GlobalScope):
        return None
    stmt = assignments[0].node
    if not isinstance(stmt, cst.ImportFrom) or isinstance(stmt.names, cst.ImportStar):
        return None
    module = get_full_name_for_node(stmt.module) if stmt.module is not None else None
    found = _project_subclasses(path, module, len(stmt.relative), bases, keyword)
    for alias in stmt.names:
        local = alias.asname.name if alias.asname is not None else alias.name
        if isinstance(local, cst.Name) and local.value == name.value:
            return found.get(get_full_name_for_node(alias.name) or "")
    return None


class SelfAttributeAssigned(cst.CSTVisitor):
    """Does a class body assign `self.<attr>` itself (then the attribute is the class's own, not its base's)?"""

    def __init__(self, attr: str) -> None:
        super().__init__()
        self.attr = attr
        self.found = False

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        t = node.target
        if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self" \
                and t.attr.value == self.attr:
            self.found = True


HF_TRAINER = frozenset({"transformers.Trainer", "transformers.trainer.Trainer"})
#: transformers' trainers a project class derives from: `Trainer` and `Seq2SeqTrainer`
TRAINERS = HF_TRAINER | frozenset({"transformers.Seq2SeqTrainer", "transformers.trainer_seq2seq.Seq2SeqTrainer"})
#: the base of TRL's step-loop PPOTrainer (0.4 - 0.13: `trl.trainer.BaseTrainer`, `trl.trainer.base.BaseTrainer`):
#: a class of the project on it is a copy of that trainer (Silent-Zebra/twisted-smc-lm's `custom_ppo_trainer.py`);
#: trl-compat's copy of the class counts too (the rule `removed-trainer-utils` moves the import there first)
CLASSIC_BASE = frozenset({"trl.trainer.BaseTrainer", "trl.trainer.base.BaseTrainer", "compat.trl.BaseTrainer",
                          "compat._trainer_utils.BaseTrainer"})


def own_trainers(code: str, path: str | None) -> list[str]:
    """The project's own `transformers.Trainer` subclasses (and subclasses of the step-loop trainers' `BaseTrainer`)
    this module defines or imports from its other files, by name: a copy of a TRL trainer the project keeps
    (mnoukhov/async_rlhf's `src/ppov2_trainer.py`, TRL 0.9's PPOv2Trainer on `Trainer`, taking a `PPOv2Config`;
    Crazytieguy/codenames-oversight's `rloo_trainer.py`, TRL 0.9.6's RLOOTrainer, taking TRL's `RLOOConfig`;
    Silent-Zebra/twisted-smc-lm's `custom_ppo_trainer.py`, TRL 0.7's PPOTrainer on `BaseTrainer`)."""
    return sorted(own_trainer_bases(code, path))


def own_trainer_bases(code: str, path: str | None) -> dict[str, str]:
    """`own_trainers`, each with the library class it derives from (`transformers.Trainer`, or the step-loop
    trainers' `trl.trainer.BaseTrainer`)."""
    if "Trainer" not in code:
        return {}
    try:
        tree = grammar.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return {}
    bases = HF_TRAINER | CLASSIC_BASE
    imported = imported_subclasses(tree, path, bases, None)
    return {**imported, **subclasses_in(tree, bases, None, imported)}


def bound_at_module_level(visitor: cst.MetadataDependent, name: cst.Name) -> bool:
    """`name` is the module-level class or import (not shadowed by a parameter or a local assignment); `visitor`
    declares `ScopeProvider`."""
    scope = visitor.get_metadata(ScopeProvider, name, None)
    if scope is None:
        return False
    assignments = [a for a in scope[name.value] if hasattr(a, "node")]
    return bool(assignments) and all(isinstance(a.scope, GlobalScope) for a in assignments)


def trainer_base(visitor: cst.MetadataDependent, expr: cst.BaseExpression, local: Mapping[str, str], *,
                 trl: bool = True) -> bool:
    """`expr`, a base of a class, is transformers' `Trainer` / `Seq2SeqTrainer`, a TRL trainer (`trl.<...>Trainer`,
    unless `trl` is False), or a module-level name of `local` (the project's subclasses reachable in the module:
    `subclasses_in`, `imported_subclasses`). `visitor` declares `QualifiedNameProvider` and `ScopeProvider`."""
    from migrations.kinds.imports import imported_names

    names = imported_names(visitor, expr)
    if names & TRAINERS or trl and any(n.startswith("trl.") and n.endswith("Trainer") for n in names):
        return True
    return isinstance(expr, cst.Name) and expr.value in local and bound_at_module_level(visitor, expr)
