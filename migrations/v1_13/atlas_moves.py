"""The mechanical TRL breaks, derived from the API atlas (`migrations.atlas`) instead of written by hand.

Three things, each decided per target release from the facts the atlas read out of the wheels:

* **moved names**: an import (any form: `from m import N`, `import m` + `m.N`, aliases, guarded imports) of a TRL
  name that the target does not export, where the target exports *the same definition* from another public module:
  every release that had the old path resolves it (re-exports and lazy entries followed) to one qualified definition,
  and the new path resolves to that same definition on the target. The new path is the shortest such one (`trl`
  itself when it exports it). Also a path that was only another way to a top-level name (`trl.NAME` resolved to the
  same definition on every release that had the path) moves to `trl.NAME` when the target exports it, even if the
  class changed since (`trl.trainer.training_configs.RewardConfig`, 0.7.0 - 0.7.9, -> `trl.RewardConfig`): code that
  imported it from `trl` gets the same object. A name the target still exports is never touched (issue 12 item 3), nor a name that only
  looks like TRL's (a local class, a vendored `.trl` package: `migrations.kinds.imports` resolution);
* **renamed keywords**: at calls of TRL callables resolved by qualified name, a keyword the target rejects that some
  release's `@deprecate_kwarg` mapped onto a new name (atlas `Signature.renamed`) is renamed when the target takes the
  new name as a parameter and the call does not pass it already;
* **removed without successor**: an import the target cannot satisfy and the atlas shows removed with no same
  definition elsewhere gets one `# TODO(trl-compat):` marker above the import, unless the statement carries a marker
  already (a hand-written rule's). Only removals up to the rule's own release (1.13) are marked: a name removed in
  1.14-1.16 is the business of the rules in those release folders; `trl-compat check` flags whatever is left.

The rule runs last in its folder (`order`), after the hand-written rules of every older release folder and of 1.13,
so a name those rewrite is gone from the code before this rule looks. No other rule's table names a path this rule
moves (`tests/migrations/v1_13/test_atlas_moves.py` proves it for every registered `SymbolMigration`).
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Iterator, Sequence
from functools import lru_cache

import libcst as cst
from libcst.metadata import QualifiedNameProvider

from migrations.base import (
    TODO_PREFIX,
    MigrationTransformer,
    RuleContext,
    dedupe_header_todos,
)
from migrations.kinds.cst import dotted, kwarg
from migrations.kinds.imports import (
    binding_paths,
    code_words,
    import_statements,
    imported_names,
    module_name,
    reachable,
)
from migrations.kinds.symbols import Action, Moved, SymbolMigration

#: The release whose removals this rule marks (its folder); later removals are left to later folders' rules.
_MARKS_UP_TO = "1.13.0"


def _atlas():  # type: ignore[no-untyped-def]
    from migrations.atlas import Atlas

    return Atlas.load("trl")


@lru_cache(maxsize=None)
def _releases_with(qname: str) -> tuple[str, ...]:
    """Every atlas release in which `qname` can be imported (oldest first)."""
    atlas = _atlas()
    return tuple(r for r in atlas.releases() if atlas.has(r, qname))


@lru_cache(maxsize=None)
def _definition(qname: str) -> str | None:
    """The one qualified definition every release that has `qname` resolves it to; None when they differ or when it is
    a module, an attribute or outside TRL (nothing to prove the same object by)."""
    atlas = _atlas()
    found = set()
    for release in _releases_with(qname):
        r = atlas.resolve(release, qname)
        if r is None or r.kind not in ("class", "def", "var"):
            return None
        found.add(r.qualname)
    return found.pop() if len(found) == 1 else None


@lru_cache(maxsize=None)
def successor(target: str, qname: str) -> str | None:
    """The path `target` exports `qname`'s very definition under, when `target` lacks `qname` itself; else None."""
    if not qname.startswith("trl.") or qname.count(".") < 1:
        return None
    atlas = _atlas()
    if atlas.has(target, qname) or atlas.is_module(qname):
        return None
    definition = _definition(qname)
    if definition is None:
        return None
    module, _, name = qname.rpartition(".")
    for candidate in atlas.moved_to(target, name, exclude=module):  # shortest first
        r = atlas.resolve(target, candidate)
        if r is not None and r.qualname == definition:
            return candidate
    return _alias_successor(target, qname, definition)


def _alias_successor(target: str, qname: str, definition: str) -> str | None:
    """`trl.NAME` when `qname` was only another path to it: on every release that had `qname`, `trl.NAME` resolved
    to the same definition (`trl.trainer.training_configs.RewardConfig` was `trl.RewardConfig` on 0.7.0 - 0.7.9),
    and `target` still exports `trl.NAME`. The class may have changed since (new fields, defaults), as it did for
    code that imported it from `trl`: the rewrite gives the same object on every release that had the old path,
    and on the target what every `from trl import NAME` gets (its calls held against it by `trl-compat check`)."""
    atlas = _atlas()
    public = "trl." + qname.rpartition(".")[2]
    if public == qname or not atlas.has(target, public):
        return None
    for release in _releases_with(qname):
        r = atlas.resolve(release, public)
        if r is None or r.qualname != definition:
            return None
    return public


@lru_cache(maxsize=None)
def removal(target: str, qname: str) -> str | None:
    """The release that removed `qname` (a name or a module some release had), when `target` lacks it and has no
    same-definition successor; None otherwise (still there, moved, or never a TRL name)."""
    if not (qname == "trl" or qname.startswith("trl.")):
        return None
    atlas = _atlas()
    if atlas.has(target, qname):
        return None
    had = [r for r in _releases_with(qname) if atlas._index(r) < atlas._index(target)]
    if not had or successor(target, qname) is not None:
        return None
    releases = atlas.releases()
    return releases[releases.index(had[-1]) + 1]


@lru_cache(maxsize=None)
def keyword_renames(target: str, qname: str) -> dict[str, str]:
    """old keyword -> new for a TRL callable: pairs some release's `@deprecate_kwarg` mapped, where `target` rejects the
    old keyword and takes the new one as a parameter."""
    atlas = _atlas()
    if not qname.startswith("trl.") or not atlas.has(target, qname):
        return {}
    pairs: dict[str, str] = {}
    for release in _releases_with(qname):
        sig = atlas.signature(release, qname)
        for old, new in sig.renamed if sig is not None else ():
            pairs.setdefault(old, new)
    now = atlas.signature(target, qname)
    if now is None:
        return {}
    out = {}
    for old, new in pairs.items():
        param = now.param(new)
        if atlas.accepts(target, qname, old) is None and param is not None and param.kind in ("pk", "ko"):
            out[old] = new
    return out


@lru_cache(maxsize=1)
def renamed_keywords() -> frozenset[str]:
    """Every old keyword any release's `@deprecate_kwarg` maps (the text gate of the keyword pass)."""
    atlas = _atlas()
    return frozenset(old for sig in atlas._signatures for old, _ in sig[3])


@lru_cache(maxsize=None)
def _modules_under(path: str) -> tuple[str, ...]:
    """The modules the atlas records names of (any release) that are the dotted `path` or under it."""
    return tuple(m for m in _atlas()._by_module if m == path or m.startswith(path + "."))


def _reachable_names(path: str, words: Collection[str]) -> Iterator[str]:
    """Every `module.name` the atlas records (any release) that a binding with `path` can give a node of a code with
    these `words` (`reachable`): the names `successor` can answer for. Built on the fly from the atlas's own index,
    parts tested before a name is spelled out (the 6,300 names stay in the atlas, not in a second copy here)."""
    atlas = _atlas()
    module, _, name = path.rpartition(".")
    if module and name in atlas._by_module.get(module, ()):
        yield path
    for m in _modules_under(path):
        if m == path or all(p in words for p in m[len(path) + 1:].split(".")):
            yield from (f"{m}.{n}" for n in atlas._by_module[m] if n in words)


@lru_cache(maxsize=1)
def _module_aliases() -> frozenset[str]:
    """`module.name` bindings that some release makes an import or lazy entry of a module (directly or through such
    bindings): the only names under which `atlas.resolve` reaches a definition by attribute parts that no
    `module.name` of the atlas spells (`_reachable_names` cannot list those). None in the atlas of TRL 0.4 - 1.16."""
    atlas = _atlas()
    found: set[str] = set()
    while True:  # one scan when there is none (no table of every binding is built: it would outweigh the answer)
        more = {key.replace(":", ".", 1) for key, runs in atlas._names.items() for run in runs
                if len(run) > 2 and _aliases_module(atlas._values[run[2]], found)} - found
        if not more:
            return frozenset(found)
        found |= more


def _aliases_module(value: list, found: set[str]) -> bool:
    """An atlas binding (kind, target) that imports a module, or a name already known to alias one."""
    kind, target = value
    return kind in ("import", "lazy") and bool(target) and (_atlas().is_module(target) or target in found)


class AtlasMoves(SymbolMigration):
    summary = ("atlas-derived: imports of TRL names the target moved (same definition) -> the target's path; "
               "@deprecate_kwarg keywords -> their new names; a marker on imports of names removed without successor")
    triggers = ("trl",)
    order = 900  # after every hand-written rule of this folder (and of every older folder, by release order)
    target: str = "1.16.0"  # the view `transform` makes carries the run's target

    def action_for(self, qname: str) -> Action | None:
        moved = successor(self.target, qname)
        if moved is None:
            return None
        module, _, name = moved.rpartition(".")
        return Moved(module, name, f"moved in TRL: the same definition ({_definition(qname)}) is exported there")

    def may_act(self, imports: Sequence[cst.Import | cst.ImportFrom], code: str) -> bool:
        """False only when the moved-names pass would find nothing to move: the exact gate `SymbolMigration.transform`
        tests before it resolves qualified names (afresh after every rule that changed the tree: for nothing on most
        files, since this rule runs after every hand-written one).

        Why it is exact: the pass acts on a qualified name only when `successor(target, qname)` is not None, and the
        qualified names a module can hold are the binding paths of its imports followed by parts that are words of
        the code (`migrations.kinds.imports.binding_paths`, `reachable`). A successor exists only for a
        `module.name` the atlas records, or a name reached through one that resolves to a module
        (`_module_aliases`); `_reachable_names` lists the former for each binding path. So some listed name must be
        reachable and have a successor, or a module alias must lie on the way. A test holds this gate against the
        full pass over every case and example file."""
        words: set[str] | None = None
        aliases = _module_aliases()
        for path, exact in binding_paths(imports):
            if exact:
                if successor(self.target, path) is not None:
                    return True
                continue
            words = code_words(code) if words is None else words
            if any(successor(self.target, q) is not None for q in _reachable_names(path, words)):
                return True
            if any(reachable(a, path, words) or path.startswith(a + ".") for a in aliases):
                return True
        return False

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        """Three passes, each resolving qualified names only when a metadata-free test says it may act: the
        moved-names pass when `may_act`, the keyword pass when the code spells an old keyword `old=`, the marking
        pass when an import names a removed TRL name or module (`_gone`). On most files none of them runs, and the
        rule costs a walk over the import statements."""
        view = copy.copy(self)
        view.target = ctx.options.atlas_trl
        module = SymbolMigration.transform(view, wrapper, ctx)
        if module is wrapper.module:
            text = ctx.module_code(wrapper)
        else:
            wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
            text = module.code
        imports = import_statements(module)
        passes: list[type[_AtlasPass]] = []
        if any(f"{old}=" in text for old in renamed_keywords()):
            passes.append(_RenameKeywords)
        # the marking pass rebuilds every node, so only when an import would be marked
        if any(_gone(view.target, _import_qnames(node) if isinstance(node, cst.Import)
                     else _import_from_qnames(view.target, node)) for node in imports):
            passes.append(_MarkRemoved)
        for kind in passes:
            t = kind(view, ctx)
            new = wrapper.visit(t)
            if t.changed:
                module = dedupe_header_todos(new)
                wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
        return module


class _AtlasPass(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def __init__(self, rule: AtlasMoves, ctx: RuleContext) -> None:
        super().__init__(rule, ctx)
        self.target = rule.target


class _RenameKeywords(_AtlasPass):
    """`get_peft_config(model_config=x)` -> `get_peft_config(model_args=x)` where the target dropped the alias."""

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        qnames = sorted(q for q in imported_names(self, original_node.func) if q.startswith("trl."))
        renames = next((keyword_renames(self.target, q) for q in qnames if keyword_renames(self.target, q)), {})
        call = updated_node
        for old, new in renames.items():
            arg = kwarg(call, old)
            if arg is None:
                continue
            if kwarg(call, new) is not None:
                self.todo(original_node, f"both {old}= and {new}= are passed; TRL renamed {old}= to {new}= "
                                         f"(@deprecate_kwarg) and TRL {self.target} rejects {old}=: drop one")
                continue
            call = call.with_changes(args=[a.with_changes(keyword=cst.Name(new)) if a is arg else a
                                           for a in call.args])
            self.note(original_node, f"{old}= -> {new}= (renamed through @deprecate_kwarg; TRL {self.target} "
                                     f"rejects {old}=)")
        return call


class _MarkRemoved(_AtlasPass):
    """One marker above an import of a TRL name or module removed (no successor) up to 1.13, unless marked already."""

    def visit_Module(self, node: cst.Module) -> None:
        self._header = any(line.comment is not None and line.comment.value.startswith(TODO_PREFIX)
                           for line in node.header)

    def _marked(self) -> bool:
        stmt = self._stmt_stack[-1] if self._stmt_stack else None
        if stmt is None:
            return True
        if stmt is self._first_stmt and self._header:
            return True
        return any(line.comment is not None and line.comment.value.startswith(TODO_PREFIX)
                   for line in getattr(stmt, "leading_lines", ()))

    def _elsewhere(self, name: str, module: str) -> str | None:
        """The shortest public path of another definition of `name` on the target (not in `module`), if any."""
        others = _atlas().moved_to(self.target, name, exclude=module)
        return others[0] if others else None

    def _flag(self, node: cst.CSTNode, qnames: list[str], never: Sequence[str] = (),
              imported: Sequence[str] = ()) -> None:
        gone = _gone(self.target, qnames)
        if not gone or self._marked():
            return
        # names imported from a gone module that no TRL release ever had (a typo): the more precise problem, first
        parts = [f"{q} is in no TRL release (a typo?)" for q in never]
        for q, r in gone:
            if _atlas().is_module(q):  # a module gone as a whole: where do the names imported from it live now?
                found = [(n, self._elsewhere(n, q)) for n in imported]
            else:
                module, _, name = q.rpartition(".")
                found = [(name, self._elsewhere(name, module))]
            elsewhere = [f"{name} at {where}" for name, where in found if where]
            parts.append(f"{q} was removed in TRL {r}" + (
                f" (TRL {self.target} has a different definition of {', '.join(elsewhere)}: check it fits first)"
                if elsewhere else ""))
        self.todo(node, "; ".join(parts) + f"; TRL {self.target} has no same definition elsewhere: replace it or "
                                           "keep a local copy")

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        qnames = _import_from_qnames(self.target, node)
        if qnames:
            imported = [] if isinstance(node.names, cst.ImportStar) else [
                alias.name.value for alias in node.names if isinstance(alias.name, cst.Name)]
            self._flag(node, qnames, _never_had(node, qnames), imported)
        return False

    def visit_Import(self, node: cst.Import) -> bool:
        self._flag(node, _import_qnames(node))
        return False


def _gone(target: str, qnames: list[str]) -> list[tuple[str, str]]:
    """(qname, the release that removed it) for those of `qnames` removed without successor up to `_MARKS_UP_TO`."""
    gone = [(q, removal(target, q)) for q in qnames]
    return [(q, r) for q, r in gone if r is not None and _atlas()._index(r) <= _atlas()._index(_MARKS_UP_TO)]


def _import_from_qnames(target: str, node: cst.ImportFrom) -> list[str]:
    """What `_MarkRemoved` holds a `from trl... import ...` against: the module (a star import, or a module gone as a
    whole), else each imported name; [] for an import not from TRL."""
    module = module_name(node)
    if module is None or not (module == "trl" or module.startswith("trl.")):
        return []
    if isinstance(node.names, cst.ImportStar) or removal(target, module) is not None:
        return [module]
    return [f"{module}.{alias.name.value}" for alias in node.names if isinstance(alias.name, cst.Name)]


def _never_had(node: cst.ImportFrom, qnames: list[str]) -> list[str]:
    """`module.name` for each name `node` imports from the module `qnames` holds as a whole (a gone module) that no
    release in the atlas ever bound there (`from trl.core import LengthSamplerimport`); [] otherwise."""
    module = module_name(node)
    if qnames != [module] or isinstance(node.names, cst.ImportStar):
        return []
    releases = _atlas().releases()
    names = [f"{module}.{a.name.value}" for a in node.names if isinstance(a.name, cst.Name)]
    return [q for q in names if not any(_atlas().has(r, q) for r in releases)]


def _import_qnames(node: cst.Import) -> list[str]:
    return [name for alias in node.names if (name := dotted(alias.name) or "").startswith("trl.")]


MIGRATION = AtlasMoves()
