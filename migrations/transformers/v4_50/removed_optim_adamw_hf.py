"""transformers 4.50 removed the optimizer choice `optim="adamw_hf"` (read in the wheels: `OptimizerNames.ADAMW_HF`
is in 4.49.0's `training_args.py` and gone from 4.50.0's, where `TrainingArguments(optim="adamw_hf")` raises
`ValueError: adamw_hf is not a valid OptimizerNames`). TRL 1.13+ require transformers >= 4.56.2, so every such value
breaks the migrated run, most often as the default of a script's argument dataclass (TRL's StackLLaMA
`reward_modeling.py` and its many copies: `optim: Optional[str] = field(default="adamw_hf")`).

It chose transformers' own `AdamW` (`(AdamW, {"lr", "betas", "eps"})` in 4.49's `get_optimizer_cls_and_kwargs`),
whose update is not `torch.optim.AdamW`'s (rule `removed-adamw`), so `"adamw_torch"` would change training: nothing
is rewritten. Each literal that sets the field is marked at its statement with both ways out (`adamw_torch`, or 4.49's
optimizer kept through `Trainer(optimizer_cls_and_kwargs=(compat.trl.AdamW, {...}))`). The sites are the check's
(`compat.check.analyze.value_sites`: a keyword of a `TrainingArguments` / TRL config call or of `dict(...)`, a
class-body default, an assignment to `x.optim` / `x["optim"]`, a `{"optim": ...}` key), so the rule marks exactly
what `trl-compat check` reports. A comparison (`if args.optim == "adamw_hf"`) sets nothing and is left alone.
"""

from __future__ import annotations

import libcst as cst

from migrations.base import MigrationTransformer, PythonMigration, RuleContext
from migrations.kinds import grammar

_KEY = ("optim", "adamw_hf")


def _message() -> str:
    from compat.check.analyze import VALUES_GONE

    _package, since, hint = VALUES_GONE[_KEY]
    return (f'optim="adamw_hf" was removed in transformers {since.rsplit(".", 1)[0]} (TrainingArguments raises '
            f"ValueError); not rewritten: {hint}")


def _site_lines(code: str) -> set[int]:
    """The lines of the literals the check reports (`value_sites`), in this module's text."""
    from compat.check.analyze import value_sites

    try:
        tree = grammar.parse(code)
    except (SyntaxError, ValueError):  # IPython magics in a cell: the check does not see them either
        return set()
    return {node.lineno for node, _field, _value in value_sites(tree, {_KEY})}


class _Transformer(MigrationTransformer):
    def __init__(self, rule: PythonMigration, ctx: RuleContext, lines: set[int]) -> None:
        super().__init__(rule, ctx)
        self.lines = lines

    def _literal(self, node: cst.SimpleString | cst.ConcatenatedString) -> None:
        if node.evaluated_value == _KEY[1] and self.position(node)[0] in self.lines:
            self.todo(node, _message())

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        self._literal(node)

    def visit_ConcatenatedString(self, node: cst.ConcatenatedString) -> bool:
        self._literal(node)
        return False


class RemovedOptimAdamwHf(PythonMigration):
    summary = 'optim="adamw_hf" (removed in transformers 4.50: ValueError) -> TODO: adamw_torch or compat.trl.AdamW'
    triggers = ("adamw_hf",)
    requires = ("transformers", "trl")

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        lines = _site_lines(wrapper.module.code)
        if not lines:
            return wrapper.module
        t = _Transformer(self, ctx, lines)
        module = wrapper.visit(t)
        return module if t.changed else wrapper.module


MIGRATION = RemovedOptimAdamwHf()
