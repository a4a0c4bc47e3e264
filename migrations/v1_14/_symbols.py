"""Shared machinery for the "a TRL name moved or went away" rules (removed experimental trainers, `trl.losses`, ...).

A `SymbolMigration` declares a table from fully qualified TRL names to an action:

* `Moved(module, name)`: a successor exists. Every import form is rewritten so the user's code binds the successor:
  `from trl.experimental.bco import BCOTrainer [as X]` -> `from compat.trl import BCOTrainer [as X]` (in place, so
  guarded imports stay guarded); attribute uses through a module binding (`trl.experimental.bco.BCOTrainer`,
  `bco.BCOTrainer` after `from trl.experimental import bco`) become `compat.trl.BCOTrainer` with `import compat.trl`
  added; a module import that no longer has a use is dropped. A rule may make a move conditional on each use
  (`convertible`) and adjust the arguments of each call (`rewrite_call`): if one use in a file is not convertible,
  the name is handled as `Gone` in that whole file, so a file is never half migrated.
* `Gone(message)`: no successor. The code is left as it is, with a `# TODO(trl-compat): ...` marker above every import
  and use, and a manual finding.

Names are matched by qualified name (libcst's `QualifiedNameProvider`), through aliases and every import form, never
by text: a local variable that happens to be called `BCOTrainer` is not touched. The module lives in `v1_14/` because
most of its users are 1.14 rules; its leading underscore keeps it out of the registry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor
from libcst.metadata import (
    ParentNodeProvider,
    QualifiedName,
    QualifiedNameProvider,
    QualifiedNameSource,
)

from migrations.base import MigrationTransformer, PythonMigration, RuleContext
from migrations.helpers import build_dotted, dotted, kwarg

__all__ = [
    "Gone", "Moved", "SymbolMigration", "SymbolTransformer", "build_dotted", "dotted", "imported_names", "kwarg",
    "replace_string", "string_value",
]


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


def imported_names(t: cst.CSTVisitor | cst.CSTTransformer, node: cst.CSTNode) -> set[str]:
    """The qualified names of `node` that come from an import (locals and builtins are not TRL's)."""
    try:
        names: set[QualifiedName] = t.get_metadata(QualifiedNameProvider, node, set())
    except KeyError:
        return set()
    return {q.name for q in names if q.source == QualifiedNameSource.IMPORT}


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
    def convertible(self, qname: str, call: cst.Call | None) -> str | None:
        """For a conditional name: None when this use (the call it is the callee of, if any) can move, else why not."""
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
        collector = _Collector(self)
        wrapper.visit(collector)
        if not collector.relevant:
            return wrapper.module
        transformer = SymbolTransformer(self, ctx, collector)
        module = wrapper.visit(transformer)
        if not transformer.changed:
            return wrapper.module
        if transformer.module_imports:
            context = CodemodContext()
            for mod in sorted(transformer.module_imports):
                AddImportsVisitor.add_needed_import(context, mod)
            module = AddImportsVisitor(context).transform_module(module)
        return module


class _Collector(cst.CSTVisitor):
    """First pass: every use of a tabled name, and which moves are blocked in this file."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider, ParentNodeProvider)

    def __init__(self, rule: SymbolMigration) -> None:
        super().__init__()
        self.rule = rule
        self.uses: dict[cst.CSTNode, tuple[str, Action]] = {}
        self.blocked: dict[str, str] = {}  # conditional qname -> why it cannot move in this file
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
                parent = self.get_metadata(ParentNodeProvider, node, None)
                call = parent if isinstance(parent, cst.Call) and parent.func is node else None
                why = self.rule.convertible(qname, call)
                if why is not None:
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
        return action

    def module_still_used(self, module: str) -> bool:
        """True when some use under `module` stays (a Gone name, or the module object itself)."""
        for qname, action in self.uses.values():
            if (qname == module or qname.startswith(module + ".")) and not isinstance(
                self.effective(qname, action), Moved
            ):
                return True
        return False


class SymbolTransformer(MigrationTransformer):
    """Second pass: rewrite imports and uses as the collector decided."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def __init__(self, rule: SymbolMigration, ctx: RuleContext, collector: _Collector) -> None:
        super().__init__(rule, ctx)
        self.symbol_rule = rule
        self.c = collector
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

    # -- imports ----------------------------------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine | cst.FlattenSentinel | cst.RemovalSentinel:
        body: list[cst.BaseSmallStatement] = []
        changed = False
        for small in updated_node.body:
            if isinstance(small, cst.ImportFrom):
                new = self._import_from(small)
            elif isinstance(small, cst.Import):
                new = self._import(small)
            else:
                new = [small]
            changed |= new != [small]
            body.extend(new)
        if not changed:
            return updated_node
        if not body:
            return cst.RemoveFromParent()
        # one small statement per line keeps the layout readable
        lines = [updated_node.with_changes(body=[s.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)])
                 for s in body]
        lines[1:] = [cst.SimpleStatementLine(body=line.body) for line in lines[1:]]
        return lines[0] if len(lines) == 1 else cst.FlattenSentinel(lines)

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
                new.setdefault(action.module, []).append(cst.ImportAlias(name=cst.Name(action.name), asname=asname))
                self.note(node, f"{full} -> {action.module}.{action.name}" + (f": {action.note}" if action.note else ""))
                continue
            kept.append(alias)
            if isinstance(action, Gone):
                self.todo(node, action.message, action.anchor)
        if len(kept) == len(node.names):
            return [node]
        out: list[cst.BaseSmallStatement] = []
        if kept:
            kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            out.append(node.with_changes(names=kept, lpar=None if len(kept) == 1 else node.lpar,
                                         rpar=None if len(kept) == 1 else node.rpar))
        for target, aliases in new.items():
            out.append(cst.ImportFrom(module=build_dotted(target), names=_commas(aliases)))  # type: ignore[arg-type]
        return out

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
        return [node.with_changes(names=_commas(kept))]


def _commas(aliases: list[cst.ImportAlias]) -> list[cst.ImportAlias]:
    out = []
    for i, alias in enumerate(aliases):
        last = i == len(aliases) - 1
        out.append(alias.with_changes(
            comma=cst.MaybeSentinel.DEFAULT if last else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))))
    return out



def string_value(node: cst.BaseExpression) -> str | None:
    """The value of a plain (non f-) string literal, else None."""
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value if isinstance(node.evaluated_value, str) else None
    if isinstance(node, cst.ConcatenatedString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def replace_string(node: cst.SimpleString, value: str) -> cst.SimpleString:
    """A string literal with the same quotes and prefix as `node`, holding `value` (no escapes needed)."""
    quote = node.quote
    return node.with_changes(value=f"{node.prefix}{quote}{value}{quote}")

