"""Moved and removed TRL symbols: the one transformer that finds TRL names by qualified name and rewrites them.

`SymbolTransformer` resolves every node to the TRL symbols it may denote (`migrations.kinds.imports.trl_refs`:
every import form, aliases, guarded imports, string annotations; a local class or a vendored `.trl` package never
matches) and rewrites imports and uses of the symbols its rule replaces. Two ways to say what is replaced:

* code: a `SymbolTransformer` subclass implements `replacement(ref) -> Replacement | None` (the PPO rules). The
  import is rewritten in place: each alias renamed, aliases whose successor lives in another module split into a new
  `from <module> import ...` right after (same block, so a `try/except` or `TYPE_CHECKING` guard keeps guarding it),
  aliases replaced by a local definition dropped; `import trl.core` (a removed module the rule `owns_module`) becomes
  `import trl`. Uses follow: an un-aliased `PPOTrainer` becomes `GRPOTrainer`, an alias keeps its local name,
  `trl.PPOTrainer` becomes `trl.GRPOTrainer` when the successor is exported by `trl`, a bare name otherwise (with
  the import added by `ensure_imports`).
* a table: a `SymbolMigration` maps qualified names to `Moved(module, name)` / `Gone(message)`, optionally per
  removed module (`removed_modules`). `Moved`: every import form is rewritten to bind the successor, attribute uses
  through a module binding become `module.name` with `import module` added, a module import left without a use is
  dropped; a move may depend on each use (`conditional` + `convertible`) and a rule may adjust each call
  (`rewrite_call`) or any other call (`other_call`): if one use in a file is not convertible, the name is handled as
  `Gone` in that whole file, so a file is never half migrated. `Gone`: the code is left as it is, with a
  `# TODO(trl-compat): ...` marker above every import and use. The table policy is `SymbolTransformer` with the
  import and use hooks driven by a first pass (`_Collector`) instead of `replacement`.
"""

from __future__ import annotations

import collections
import os
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import ClassVar

import libcst as cst
from libcst.metadata import ParentNodeProvider, QualifiedNameProvider

from migrations.base import (
    LazyMetadata,
    Migration,
    MigrationTransformer,
    PythonMigration,
    RuleContext,
    dedupe_header_todos,
)
from migrations.kinds.cst import build_dotted, code, dotted
from migrations.kinds.imports import (
    TrlRef,
    binding_paths,
    code_words,
    commas,
    ensure_imports,
    import_block_end,
    import_from,
    import_statements,
    imported_names,
    module_name,
    reachable,
    split_import_from,
    trl_refs,
    with_kept_aliases,
)

__all__ = [
    "REMOVED_TRL_MODULES",
    "Action",
    "Gone",
    "Moved",
    "Replacement",
    "SymbolMigration",
    "SymbolTransformer",
    "mark_trl_imports",
]

REMOVED_TRL_MODULES = frozenset(
    {
        "trl.core",
        "trl.gpt2",
        "trl.ppo",
        "trl.trainer.ppo_trainer",
        "trl.trainer.ppo_config",
        "trl.trainer.ppov2_trainer",
        "trl.trainer.ppov2_config",
        "trl.models.modeling_value_head",
        "trl.models.modeling_base",
        "trl.experimental.ppo",
        "trl.experimental.ppo.ppo_trainer",
        "trl.experimental.ppo.ppo_config",
        "trl.experimental.ppo.modeling_value_head",
    }
)


@dataclass(frozen=True)
class Replacement:
    """Where a TRL symbol went (for `SymbolTransformer.replacement`). `module=None`: no import any more (the rule
    defines it locally or drops it)."""

    module: str | None
    name: str

    @property
    def in_trl_root(self) -> bool:
        return self.module == "trl"


@dataclass(frozen=True)
class Moved:
    """The name has a successor: `module.name` (importable as `from module import name`)."""

    module: str
    name: str
    note: str = ""


@dataclass(frozen=True)
class Gone:
    """The name has no successor: a TODO marker with `message`, linking to `anchor` (default: the rule's)."""

    message: str
    anchor: str | None = None


Action = Moved | Gone


class SymbolTransformer(MigrationTransformer):
    """The transformer that resolves TRL symbols by qualified name and rewrites the ones its rule replaces.

    Subclasses implement `replacement(ref)` and may override `leave_*` (calling `super()` for Name, Attribute,
    SimpleString and SimpleStatementLine); the table policy (`SymbolMigration`) overrides the import and use hooks. After `module.visit(t)`, `t.needed_imports` lists the `(module, name)`
    imports the rewritten uses need; `transform_module` applies both steps.
    """

    # ParentNodeProvider is resolved on the first `parent()` call (`LazyMetadata`): most files never ask
    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def __init__(self, rule: Migration, ctx: RuleContext) -> None:
        super().__init__(rule, ctx)
        self.needed_imports: list[tuple[str, str]] = []
        self._skip_names: set[int] = set()
        self._emitted_import_trl = False
        self.changed = False
        # (module, name) -> lines of the top-level `from module import name` statements already in the file
        self._existing_from: dict[tuple[str, str], list[int]] = {}
        # module -> lines of its top-level one-line `from module import a, b` statements; the lines of the leading
        # import block and the modules each of its names is imported from (`_merge_later`)
        self._one_line_from: dict[str, list[int]] = {}
        self._header_lines: set[int] = set()
        self._header_bound: dict[str, set[str | None]] = {}

    # ---- what the rule owns ----
    def replacement(self, ref: TrlRef) -> Replacement | None:  # pragma: no cover - overridden
        return None

    # ---- resolution ----
    def qualified_names(self, node: cst.CSTNode) -> set[str]:
        return imported_names(self, node)

    def trl_refs(self, node: cst.CSTNode) -> list[TrlRef]:
        """Every TRL symbol `node` may denote (several when imports differ by branch, e.g. try/except)."""
        return trl_refs(self, node)

    def trl_ref(self, node: cst.CSTNode, names: Iterable[str] | None = None) -> TrlRef | None:
        """The TRL symbol `node` denotes (first one whose name is in `names`, when given)."""
        wanted = set(names) if names is not None else None
        for r in self.trl_refs(node):
            if wanted is None or r.name in wanted:
                return r
        return None

    def replaced_ref(self, node: cst.CSTNode) -> tuple[TrlRef, Replacement] | None:
        for r in self.trl_refs(node):
            rep = self.replacement(r)
            if rep is not None:
                return r, rep
        return None

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        try:
            return self.lazy_metadata(ParentNodeProvider, node)  # type: ignore[return-value]
        except KeyError:
            return None

    # ---- imports ----
    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement] | cst.RemovalSentinel:
        if not any(isinstance(s, (cst.Import, cst.ImportFrom)) for s in updated_node.body):
            return updated_node
        new_small: list[cst.BaseSmallStatement] = []
        extra: list[cst.BaseSmallStatement] = []
        touched = False
        # a statement all of whose imports would join other lines disappears: not when it carries something of its own
        # (comments, blank lines that separate import groups, markers this pass put on it)
        own_lines = bool(updated_node.leading_lines) or bool(self._pending.get(id(original_node)))
        for s in updated_node.body:
            if isinstance(s, cst.ImportFrom):
                out = self._rewrite_import_from(s)
            elif isinstance(s, cst.Import):
                out = self._rewrite_import(s)
            else:
                out = None
            if out is None:
                new_small.append(s)
                continue
            touched = True
            source = module_name(s) if isinstance(s, cst.ImportFrom) else None
            if len(updated_node.body) == 1 and not (own_lines and all(
                    isinstance(o, cst.ImportFrom) and module_name(o) != source for o in out)):
                out = [o for o in out if not self._merge_later(o, source)]
            if out:
                new_small.append(out[0])
                extra.extend(out[1:])
        if not touched:
            return updated_node
        self.changed = True
        stmts: list[cst.BaseStatement] = []
        if new_small:
            new_small[-1] = new_small[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
            stmts.append(updated_node.with_changes(body=new_small))
        for e in extra:
            stmts.append(cst.SimpleStatementLine(body=[e]))
        if stmts and not new_small:
            stmts[0] = stmts[0].with_changes(leading_lines=updated_node.leading_lines)
        if not stmts:
            if len(self._stmt_stack) > 1:  # inside a block: keep it non-empty
                return updated_node.with_changes(body=[cst.Pass()])
            return cst.RemovalSentinel.REMOVE
        return stmts[0] if len(stmts) == 1 else cst.FlattenSentinel(stmts)

    def _merge_later(self, stmt: cst.BaseSmallStatement, source: str | None) -> bool:
        """Whether `stmt`, a top-level `from M import a, b` this rule writes for names it moved out of a `from source
        import ...`, joins a one-line top-level `from M import ...` instead (the names are appended there with
        `ensure_imports` once the pass is done), so that two rules moving names to `compat.trl` leave one import line,
        not one each. Only an import line earlier in the file or in the same leading import block qualifies; aliased
        names and imports inside blocks stay where they are."""
        if len(self._stmt_stack) > 1 or not isinstance(stmt, cst.ImportFrom) or isinstance(stmt.names, cst.ImportStar):
            return False
        target = module_name(stmt) or ""
        if target == source or any(a.asname is not None for a in stmt.names) or not self._stmt_stack:
            return False
        line = self.position(self._stmt_stack[-1])[0]
        header = line in self._header_lines  # both in the leading import block: nothing runs in between
        if not any(at < line or header and at in self._header_lines for at in self._one_line_from.get(target, ())):
            return False
        names = [code(a.name) for a in stmt.names]
        if any(self._header_bound.get(n, set()) - {source, target} for n in names):
            return False  # another import binds the same name: keep the order of the bindings as it is
        self.needed_imports.extend((target, n) for n in names)
        return True

    def _rewrite_import_from(self, node: cst.ImportFrom) -> list[cst.BaseSmallStatement] | None:
        mod = module_name(node)
        if mod is None or not (mod == "trl" or mod.startswith("trl.")) or isinstance(node.names, cst.ImportStar):
            return None

        def successor(module: str, name: str) -> tuple[str | None, str] | None:
            rep = self.replacement(TrlRef(module, name))
            return None if rep is None else (rep.module, rep.name)

        out = split_import_from(node, successor, last=REMOVED_TRL_MODULES)
        if not out or not self._existing_from:
            return out
        # a moved name the file already imports, unaliased, from the same module at an earlier top-level line
        # (`from transformers import AutoModelForCausalLM` above): no second import of it (ruff F811)
        line, own = self.position(node)[0], module_name(node)
        kept: list[cst.BaseSmallStatement] = []
        for stmt in out:
            if isinstance(stmt, cst.ImportFrom) and not isinstance(stmt.names, cst.ImportStar) and \
                    module_name(stmt) != own:
                target = module_name(stmt)
                names = [a for a in stmt.names if a.asname is not None or not any(
                    at < line for at in self._existing_from.get((target or "", code(a.name)), ()))]
                if not names:
                    continue
                stmt = stmt.with_changes(names=commas(names))
            kept.append(stmt)
        return kept

    def _rewrite_import(self, node: cst.Import) -> list[cst.BaseSmallStatement] | None:
        """`import trl.core` -> `import trl`; `import trl.experimental.ppo as ppo` dropped (its uses are rewritten)."""
        keep: list[cst.ImportAlias] = []
        changed = False
        for alias in node.names:
            name = dotted(alias.name) or ""
            if name in REMOVED_TRL_MODULES and self.owns_module(name):
                changed = True
                if alias.asname is None:
                    new = alias.with_changes(name=cst.Name("trl"))
                    if all(code(a.name) != "trl" or a.asname is not None for a in keep):
                        keep.append(new)
                continue
            keep.append(alias)
        if not changed:
            return None
        # `import trl.a` + `import trl.b` both became `import trl`: keep the first only
        if any(code(a.name) == "trl" and a.asname is None for a in keep):
            if self._emitted_import_trl:
                keep = [a for a in keep if not (code(a.name) == "trl" and a.asname is None)]
            self._emitted_import_trl = True
        if not keep:
            return []
        return [node.with_changes(names=commas(keep))]

    def owns_module(self, module: str) -> bool:
        """Whether this rule rewrites `import <module>` (a removed module whose symbols it replaces)."""
        return False

    def visit_Module(self, node: cst.Module) -> bool:
        # an existing `import trl` makes a rewritten `import trl.core` -> `import trl` redundant
        header_end = import_block_end(node)
        for index, stmt in enumerate(node.body):
            if index < header_end and isinstance(stmt, cst.SimpleStatementLine):
                self._header_lines.add(self.position(stmt)[0])
                for small in stmt.body:
                    if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                        for a in small.names:
                            self._header_bound.setdefault(code(a.asname.name) if a.asname else code(a.name),
                                                          set()).add(module_name(small))
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                        if len(stmt.body) == 1 and small.lpar is None and not small.relative:
                            self._one_line_from.setdefault(module_name(small) or "", []).append(self.position(stmt)[0])
                        for a in small.names:
                            if a.asname is None:
                                self._existing_from.setdefault((module_name(small) or "", code(a.name)), []).append(
                                    self.position(stmt)[0])
                    if isinstance(small, cst.Import) and any(
                        code(a.name) == "trl" and a.asname is None for a in small.names
                    ):
                        self._emitted_import_trl = True
        return True

    # ---- uses ----
    def visit_Attribute(self, node: cst.Attribute) -> bool:
        self._skip_names.add(id(node.attr))
        return True

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        found = self.replaced_ref(original_node)
        if found is None:
            return updated_node
        ref, rep = found
        self.changed = True
        if rep.in_trl_root:
            base = dotted(updated_node.value)
            base_q = {q for q in self.qualified_names(original_node.value)}
            if base is not None and "trl" in base_q:
                return updated_node.with_changes(attr=cst.Name(rep.name))
        if rep.module is not None:
            self.needed_imports.append((rep.module, rep.name))
        return cst.Name(rep.name)

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        if id(original_node) in self._skip_names:
            return updated_node
        found = self.replaced_ref(original_node)
        if found is None:
            return updated_node
        ref, rep = found
        if original_node.value != ref.name:  # an alias (`... as Alias`): the local name stays
            return updated_node
        if rep.name != original_node.value:
            self.changed = True
            return updated_node.with_changes(value=rep.name)
        return updated_node

    def leave_SimpleString(self, original_node: cst.SimpleString, updated_node: cst.SimpleString) -> cst.BaseExpression:
        """String annotations: libcst resolves `"PPOTrainer"` in annotation position; rename inside the string."""
        refs = self.trl_refs(original_node)
        if not refs:
            return updated_node
        value = updated_node.value
        for ref in refs:
            rep = self.replacement(ref)
            if rep is None or rep.name == ref.name:
                continue
            new = re.sub(rf"(?<![\w.]){re.escape(ref.name)}\b", rep.name, value)
            if new != value:
                value = new
                self.changed = True
        return updated_node.with_changes(value=value)

    # ---- running ----
    def transform_module(self, wrapper: cst.MetadataWrapper) -> cst.Module:
        module = wrapper.visit(self)
        if self.needed_imports:
            module = ensure_imports(module, self.needed_imports)
        return dedupe_header_todos(module)



class SymbolMigration(PythonMigration):
    """A rule defined by a table of qualified names; subclasses fill `symbols` / `removed_modules` and may hook."""

    # module -> message for any name under it that `symbols` does not list (the whole module is gone)
    removed_modules: ClassVar[dict[str, str]] = {}
    symbols: ClassVar[dict[str, Action]] = {}
    # names whose move depends on each use (`convertible` decides)
    conditional: ClassVar[frozenset[str]] = frozenset()
    # every tabled name is a TRL name, reached through an import that spells `trl`
    requires: ClassVar[tuple[str, ...]] = ("from trl", "import trl")

    # -- hooks ------------------------------------------------------------------------------------------
    def convertible(self, qname: str, call: cst.Call | None) -> str | Moved | None:
        """For a conditional name: None when this use (the call it is the callee of, if any) can move, else why not,
        or another move that this use needs (every use of the name in the file then takes it)."""
        return None

    def rewrite_call(self, t: "SymbolTransformer", qname: str, original: cst.Call, updated: cst.Call) -> cst.Call:
        """Adjust a call of a moved name (its callee is already rewritten)."""
        return updated

    def other_call(self, t: "SymbolTransformer", original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        """Any other call in a file this rule touches (e.g. a config value the move implies)."""
        return updated

    def wants_call(self, v: cst.CSTVisitor, call: cst.Call) -> bool:
        """True when `other_call` would change this call, so the file needs the rule without a tabled name."""
        return False

    def may_act(self, imports: Sequence[cst.Import | cst.ImportFrom], code: str) -> bool:
        """False only when `transform` would find nothing to do in a module with these import statements and this
        code: the exact gate `transform` tests before it resolves any metadata. For a table rule, some import gives
        a name the table lists, or one under a removed module, by parts that are words of the code (`reachable`);
        a rule that overrides `action_for` or `wants_call` (which may answer for anything) is always run, unless it
        overrides this gate too."""
        if type(self).action_for is not SymbolMigration.action_for or \
                type(self).wants_call is not SymbolMigration.wants_call:
            return True
        return self.tabled_name_reachable(imports, code)

    def tabled_name_reachable(self, imports: Sequence[cst.Import | cst.ImportFrom], code: str) -> bool:
        """Whether a qualified name some import gives (`binding_paths`) can be one `action_for` of the table answers
        for: a name of `symbols`, a removed module, or anything under a removed module."""
        words: set[str] | None = None
        for path, exact in binding_paths(imports):
            if exact:
                if self.action_for(path) is not None:
                    return True
                continue
            if any(path == m or path.startswith(m + ".") for m in self.removed_modules):
                return True
            words = code_words(code) if words is None else words
            if any(reachable(q, path, words) for q in (*self.symbols, *self.removed_modules)):
                return True
        return False

    # -- table lookup -----------------------------------------------------------------------------------
    def action_for(self, qname: str) -> Action | None:
        if qname in self.symbols:
            return self.symbols[qname]
        for module, message in self.removed_modules.items():
            if qname == module or qname.startswith(module + "."):
                # a submodule path of a listed name (trl.experimental.bco.bco_trainer.BCOTrainer)
                last = qname.rsplit(".", 1)[-1]
                listed = self.symbols.get(f"{module}.{last}")
                return listed if listed is not None else Gone(message)
        return None

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        if not self.may_act(import_statements(wrapper.module), ctx.module_code(wrapper)):
            return wrapper.module  # nothing to act on: no qualified names resolved for nothing
        collector = _Collector(self)
        wrapper.visit(collector)
        if not collector.relevant:
            return wrapper.module
        transformer = _TableTransformer(self, ctx, collector, ctx.module_code(wrapper))
        module = wrapper.visit(transformer)
        if not transformer.changed:
            return wrapper.module
        needed = [(mod, "") for mod in sorted(transformer.module_imports)] + transformer.needed_imports
        if needed:
            module = ensure_imports(module, needed)
        return module


class _Collector(LazyMetadata, cst.CSTVisitor):
    """First pass: every use of a tabled name, and which moves are blocked in this file."""

    # ParentNodeProvider only for a use of a conditional name, resolved then (`LazyMetadata`)
    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def __init__(self, rule: SymbolMigration) -> None:
        super().__init__()
        self.rule = rule
        self.uses: dict[cst.CSTNode, tuple[str, Action]] = {}
        self.blocked: dict[str, str] = {}  # conditional qname -> why it cannot move in this file
        self.instead: dict[str, Moved] = {}  # conditional qname -> the other move some use in this file needs
        self.roots_seen: set[str] = set()  # top-level packages still used through a plain `import pkg...`
        self.relevant = False

    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            name = dotted(alias.name) or ""
            if self.rule.action_for(name) is not None:
                self.relevant = True
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        module = dotted(node.module) if not node.relative else None
        if module is None:
            return False
        if isinstance(node.names, cst.ImportStar):
            if self.rule.action_for(module) is not None:
                self.relevant = True
            return False
        for alias in node.names:
            if self.rule.action_for(f"{module}.{alias.name.value}") is not None:
                self.relevant = True
        return False

    def _use(self, node: cst.Name | cst.Attribute) -> bool:
        for qname in sorted(imported_names(self, node)):
            action = self.rule.action_for(qname)
            if action is None:
                continue
            self.relevant = True
            self.uses[node] = (qname, action)
            if isinstance(action, Moved) and qname in self.rule.conditional:
                parent = self.lazy_metadata(ParentNodeProvider, node, None)
                call = parent if isinstance(parent, cst.Call) and parent.func is node else None
                why = self.rule.convertible(qname, call)
                if isinstance(why, Moved):
                    self.instead.setdefault(qname, why)
                elif why is not None:
                    self.blocked.setdefault(qname, why)
            return False
        if isinstance(node, cst.Name) and imported_names(self, node):
            self.roots_seen.add(node.value)
        return True

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return self._use(node)

    def visit_Call(self, node: cst.Call) -> None:
        if not self.relevant and self.rule.wants_call(self, node):
            self.relevant = True

    def visit_Name(self, node: cst.Name) -> bool:
        return self._use(node)

    def effective(self, qname: str, action: Action) -> Action:
        if isinstance(action, Moved) and qname in self.blocked:
            return Gone(self.blocked[qname])
        if isinstance(action, Moved) and qname in self.instead:
            return self.instead[qname]
        return action

    def module_still_used(self, module: str) -> bool:
        """True when some use under `module` stays (a Gone name, or the module object itself)."""
        for qname, action in self.uses.values():
            if (qname == module or qname.startswith(module + ".")) and not isinstance(
                self.effective(qname, action), Moved
            ):
                return True
        return False


#: a module that may reach its own names by string: no import of it counts as unused
_DYNAMIC_NAMESPACE = re.compile(r"__all__|\b(?:globals|locals|vars|eval|exec|getattr|__import__)\s*\(")


class _TableTransformer(SymbolTransformer):
    """Second pass of the table policy: rewrite imports and uses as the collector decided."""

    def __init__(self, rule: SymbolMigration, ctx: RuleContext, collector: _Collector, text: str) -> None:
        super().__init__(rule, ctx)
        self.symbol_rule = rule
        self.c = collector
        self.text = text  # the module's code
        self._word_counts: collections.Counter[str] | None = None  # empty where a name may be reached dynamically
        self.module_imports: set[str] = set()

    # -- uses -------------------------------------------------------------------------------------------
    def _leave_use(self, original: cst.Name | cst.Attribute, updated: cst.BaseExpression) -> cst.BaseExpression:
        entry = self.c.uses.get(original)
        if entry is None:
            return updated
        qname, action = entry
        action = self.c.effective(qname, action)
        if isinstance(action, Gone):
            self.todo(original, action.message, action.anchor)
            return updated
        if isinstance(original, cst.Attribute):
            self.module_imports.add(action.module)
            self.note(original, f"{qname} -> {action.module}.{action.name}" + (f": {action.note}" if action.note else ""))
            return build_dotted(f"{action.module}.{action.name}").with_changes(
                lpar=original.lpar, rpar=original.rpar
            )
        # a bare name bound by an import that leave_SimpleStatementLine rewrites: rename only when not aliased
        if original.value == qname.rsplit(".", 1)[-1] and action.name != original.value:
            return updated.with_changes(value=action.name)
        return updated

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        return self._leave_use(original_node, updated_node)

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        return self._leave_use(original_node, updated_node)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        entry = self.c.uses.get(original_node.func)
        if entry is not None:
            qname, action = entry
            if isinstance(self.c.effective(qname, action), Moved):
                return self.symbol_rule.rewrite_call(self, qname, original_node, updated_node)
        return self.symbol_rule.other_call(self, original_node, updated_node)

    # -- imports: the statement layout is SymbolTransformer's; these two hooks decide each import ----------
    def _rewrite_import_from(self, node: cst.ImportFrom) -> list[cst.BaseSmallStatement] | None:
        new = self._import_from(node)
        return None if new == [node] else new

    def _rewrite_import(self, node: cst.Import) -> list[cst.BaseSmallStatement] | None:
        new = self._import(node)
        return None if new == [node] else new

    def _import_from(self, node: cst.ImportFrom) -> list[cst.BaseSmallStatement]:
        module = dotted(node.module) if not node.relative else None
        if module is None:
            return [node]
        if isinstance(node.names, cst.ImportStar):
            action = self.symbol_rule.action_for(module)
            if action is not None:
                message = action.message if isinstance(action, Gone) else (
                    f"`from {module} import *`: import the names you use from {action.module} instead")
                self.todo(node, message, getattr(action, "anchor", None))
            return [node]
        kept: list[cst.ImportAlias] = []
        new: dict[str, list[cst.ImportAlias]] = {}
        for alias in node.names:
            full = f"{module}.{alias.name.value}"
            action = self.symbol_rule.action_for(full)
            if action is None:
                kept.append(alias)
                continue
            action = self.c.effective(full, action)
            removed_module = full in self.symbol_rule.removed_modules
            if removed_module and not self.c.module_still_used(full):
                self.note(node, f"dropped the import of {full} (every use now points at its successor)")
                continue
            if isinstance(action, Moved) and not removed_module:
                local = alias.asname.name.value if alias.asname is not None else None  # type: ignore[union-attr]
                asname = cst.AsName(name=cst.Name(local)) if local and local != action.name else None
                if asname is not None or not self._already_imported(action.module, action.name, node):
                    new.setdefault(action.module, []).append(cst.ImportAlias(name=cst.Name(action.name),
                                                                             asname=asname))
                self.note(node, f"{full} -> {action.module}.{action.name}" + (f": {action.note}" if action.note else ""))
                continue
            if isinstance(action, Gone) and self._unused(alias):
                self.note(node, f"dropped the import of {full}, which this module never uses (gone: "
                                f"{action.message})")
                continue
            kept.append(alias)
            if isinstance(action, Gone):
                self.todo(node, action.message, action.anchor)
        if len(kept) == len(node.names):
            return [node]
        out: list[cst.BaseSmallStatement] = []
        if kept:
            out.append(with_kept_aliases(node, kept))
        for target, aliases in new.items():
            out.append(import_from(target, aliases))
        return out

    def _unused(self, alias: cst.ImportAlias) -> bool:
        """Whether the name `alias` binds is never used, so its import of a name the target lacks can go (ruff's F401
        fix): the name is a word of the module's code only once (the import itself: no use, no string or comment
        naming it, no rebinding), the module declares no `__all__`, is no package `__init__` (a re-export) and
        does not reach its namespace by name (`globals()`, `vars()`, `eval`, `getattr`, ...), and no file of the run
        imports the name, or `*`, from a module of this file's name."""
        local = alias.asname.name if alias.asname is not None else alias.name  # type: ignore[union-attr]
        if not isinstance(local, cst.Name):
            return False
        if self.ctx.options.imported_elsewhere(self.ctx.path, local.value):
            return False  # another module of the project may take it from this one
        if self._word_counts is None:
            dynamic = _DYNAMIC_NAMESPACE.search(self.text) or os.path.basename(self.ctx.path or "") == "__init__.py"
            self._word_counts = collections.Counter() if dynamic else collections.Counter(re.findall(r"\w+", self.text))
        return self._word_counts[local.value] == 1

    def _already_imported(self, module: str, name: str, node: cst.ImportFrom) -> bool:
        """`from module import name` (unaliased) is a top-level import of the file at or above `node`'s line (the
        same statement included): a second import of the successor would rebind it (ruff F811)."""
        line = self.position(node)[0]
        return any(at <= line for at in self._existing_from.get((module, name), ()))

    def _import(self, node: cst.Import) -> list[cst.BaseSmallStatement]:
        kept: list[cst.ImportAlias] = []
        extra_roots: list[str] = []
        changed = False
        for alias in node.names:
            full = dotted(alias.name) or ""
            action = self.symbol_rule.action_for(full)
            module = next((m for m in self.symbol_rule.removed_modules
                           if full == m or full.startswith(m + ".")), None)
            if action is None or module is None:
                kept.append(alias)
                continue
            if self.c.module_still_used(module):
                kept.append(alias)
                if isinstance(action, Gone):
                    self.todo(node, action.message, action.anchor)
                continue
            changed = True
            self.note(node, f"dropped the import of {full} (every use now points at its successor)")
            root = full.split(".")[0]
            if alias.asname is None and root in self.c.roots_seen:
                extra_roots.append(root)  # `import trl.experimental.x` also bound `trl`, still used
        if not changed:
            return [node]
        kept += [cst.ImportAlias(name=cst.Name(r)) for r in dict.fromkeys(extra_roots)]
        if not kept:
            return []
        return [node.with_changes(names=commas(kept))]


def mark_trl_imports(rule: PythonMigration, wrapper: cst.MetadataWrapper, ctx: RuleContext,
                     names: Collection[str], message: str) -> cst.Module:
    """The module with a marker (`message`, `{name}` filled in) above each `from trl... import` of one of `names`;
    nothing else changes. For a TRL config that feeds the project's own copy of a TRL trainer (`own_trainers`):
    rewriting it for TRL's successor trainer would break the copy, which reads the old fields."""

    class _Mark(MigrationTransformer):
        def leave_ImportFrom(self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom) -> cst.ImportFrom:
            module = module_name(original_node) or ""
            if original_node.relative or not (module == "trl" or module.startswith("trl.")) or \
                    isinstance(original_node.names, cst.ImportStar):
                return updated_node
            for alias in original_node.names:
                if (dotted(alias.name) or "") in names:
                    self.todo(original_node, message.format(name=dotted(alias.name)))
            return updated_node

    return wrapper.visit(_Mark(rule, ctx))
