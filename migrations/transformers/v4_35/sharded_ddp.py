"""transformers 4.35 removed fairscale's sharded DDP: `TrainingArguments.sharded_ddp`, the `Trainer.sharded_ddp`
attribute and `ShardedDDPOption` (`transformers.trainer` re-exported it from `trainer_utils`; the atlas has it in
4.34.1 and not in 4.35.2, whose `trainer.py` never mentions `sharded_ddp`).

LLaVA's `llava_trainer.py` and its many copies (YiyangZhou/POVID and other VLM DPO / RLHF repositories) guard the
fairscale paths of their `Trainer` subclass with `if self.sharded_ddp == ShardedDDPOption.SIMPLE:`. On 4.34 with the
option unset (`TrainingArguments(sharded_ddp="")`, the default) `Trainer.__init__` set `self.sharded_ddp = None`, so
the test was false; on 4.35+ the attribute is gone (an `AttributeError`) and no option can turn the feature on. So,
in a class deriving from `transformers.Trainer` (directly, through a TRL trainer, or through the project's own
subclass, in the file or a module it imports) that does not assign `self.sharded_ddp` itself, an `if` / `elif` whose
test is `self.sharded_ddp == ShardedDDPOption.<X>` (or `is`) becomes its `else` branch (nothing without one): what
4.34 ran with the option unset, and the only path the target has. The import of `ShardedDDPOption` goes when nothing
uses it any more. Any other use (a full copy of transformers' `Trainer`, `args.sharded_ddp`) is left to the leftovers
marker.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import QualifiedNameProvider, ScopeProvider

from migrations.base import MigrationTransformer, PythonMigration, RuleContext
from migrations.kinds import grammar
from migrations.kinds.imports import drop_unused_import, imported_names
from migrations.kinds.trainer_subclasses import (
    TRAINERS,
    SelfAttributeAssigned,
    imported_subclasses,
    subclasses_in,
    trainer_base,
)

_OPTION = frozenset({"transformers.trainer.ShardedDDPOption", "transformers.trainer_utils.ShardedDDPOption"})
_NOTE = ("`if self.sharded_ddp == ShardedDDPOption...:` -> its else branch (transformers 4.35 removed sharded DDP: "
         "with the option unset, 4.34 never took this branch)")


class _Transformer(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider, ScopeProvider)

    def __init__(self, rule: PythonMigration, ctx: RuleContext) -> None:
        super().__init__(rule, ctx)
        self._local: dict[str, str] = {}  # the project's Trainer subclasses reachable here
        self._classes: list[bool] = []  # per enclosing class: a Trainer subclass without its own self.sharded_ddp
        self._elifs: set[int] = set()  # the `If` nodes that are the `elif` of another

    def visit_Module(self, node: cst.Module) -> None:
        try:
            tree = grammar.parse(node.code)
        except (SyntaxError, ValueError):
            return
        imported = imported_subclasses(tree, self.ctx.path, TRAINERS, None)
        self._local = {**imported, **subclasses_in(tree, TRAINERS, None, imported)}

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        trainer = len(node.bases) == 1 and trainer_base(self, node.bases[0].value, self._local)
        own = SelfAttributeAssigned("sharded_ddp")
        if trainer:
            node.body.visit(own)
        self._classes.append(trainer and not own.found)

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        self._classes.pop()
        return updated_node

    def _dead(self, test: cst.BaseExpression) -> bool:
        """`self.sharded_ddp == ShardedDDPOption.X` (or `is`) in a method of such a class."""
        if not (self._classes and self._classes[-1]) or not isinstance(test, cst.Comparison) \
                or len(test.comparisons) != 1:
            return False
        left, target = test.left, test.comparisons[0]
        return (isinstance(target.operator, (cst.Equal, cst.Is))
                and isinstance(left, cst.Attribute) and left.attr.value == "sharded_ddp"
                and isinstance(left.value, cst.Name) and left.value.value == "self"
                and isinstance(target.comparator, cst.Attribute)
                and bool(imported_names(self, target.comparator.value) & _OPTION))

    def _without_dead_elifs(self, original: cst.If, updated: cst.If) -> cst.If:
        """`updated` with each dead `elif` of its chain replaced by what follows it."""
        if not isinstance(updated.orelse, cst.If) or not isinstance(original.orelse, cst.If):
            return updated
        inner = self._without_dead_elifs(original.orelse, updated.orelse)
        if self._dead(original.orelse.test):
            self.note(original.orelse, _NOTE)
            return updated.with_changes(orelse=inner.orelse)
        return updated.with_changes(orelse=inner)

    def visit_If(self, node: cst.If) -> None:
        if isinstance(node.orelse, cst.If):
            self._elifs.add(id(node.orelse))

    def leave_If(self, original_node: cst.If, updated_node: cst.If
                 ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement] | cst.RemovalSentinel:
        if id(original_node) in self._elifs:
            return updated_node  # an `elif`: the statement it belongs to rewrites its chain
        if not self._dead(original_node.test):
            return self._without_dead_elifs(original_node, updated_node)
        self.note(original_node, _NOTE)
        rest = self._without_dead_elifs(original_node, updated_node).orelse
        if isinstance(rest, cst.If):
            return rest.with_changes(leading_lines=updated_node.leading_lines)
        if isinstance(rest, cst.Else) and isinstance(rest.body, cst.IndentedBlock) and rest.body.body:
            body = list(rest.body.body)
            body[0] = body[0].with_changes(leading_lines=[*updated_node.leading_lines, *body[0].leading_lines])
            return cst.FlattenSentinel(body)
        return cst.RemoveFromParent()

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock,
                            updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        if updated_node.body or not original_node.body:
            return updated_node
        return updated_node.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])  # the block held only the if


class ShardedDdp(PythonMigration):
    summary = "`if self.sharded_ddp == ShardedDDPOption.X:` in Trainer subclasses (removed in transformers 4.35) -> " \
              "its else branch"
    triggers = ("ShardedDDPOption",)
    requires = ("transformers",)

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        t = _Transformer(self, ctx)
        module = wrapper.visit(t)
        if not t.changed:
            return wrapper.module
        for path in sorted(_OPTION):
            module = drop_unused_import(module, path.rsplit(".", 1)[0], "ShardedDDPOption")
        return module


MIGRATION = ShardedDdp()
