"""`SFTConfig(loss_type="chunked_nll")` -> `SFTConfig(loss_type="nll")`.

TRL 1.15 made `"chunked_nll"` a deprecated alias of `"nll"` (`nll` itself now computes the loss without materialising
the full logits); `SFTConfig.__post_init__` maps it with a `FutureWarning` and says it goes in v2.0.0, and
`SFTTrainer` itself only accepts `"nll"` and `"dft"` (so a value set after the config was built is refused).
Verified in the wheels: trl 1.12-1.14 `sft_config.py` default `"chunked_nll"`; trl 1.15.0 and 1.16.0
`sft_config.py` `__post_init__` deprecation, `sft_trainer.py` `if args.loss_type not in ("nll", "dft")`.

`SFTConfig` is found through imports and aliases with libcst's `QualifiedNameProvider` (`from trl import SFTConfig
as C`, `import trl as t; t.SFTConfig(...)`, `trl.trainer.sft_config.SFTConfig`), never by its spelling; a local class
named `SFTConfig` is left alone. Any other `"chunked_nll"` string literal (an attribute set later, a subclass of
`SFTConfig`, a comparison, a dict passed as `**kwargs`) gets a TODO marker: a human decides.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import QualifiedNameProvider

from migrations.base import MigrationTransformer, PythonMigration

OLD = "chunked_nll"
NEW = "nll"
SFT_CONFIG_NAMES = frozenset({"trl.SFTConfig", "trl.trainer.SFTConfig", "trl.trainer.sft_config.SFTConfig"})


def _is_old_literal(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.SimpleString) and node.evaluated_value == OLD


class _Transformer(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def __init__(self, rule: PythonMigration, ctx) -> None:
        super().__init__(rule, ctx)
        self._handled: set[cst.SimpleString] = set()
        self._docstring_exprs: set[cst.CSTNode] = set()

    def visit_Expr(self, node: cst.Expr) -> None:
        # A bare string statement is a docstring or a comment in disguise: never a setting.
        self._docstring_exprs.add(node.value)

    def visit_Call(self, node: cst.Call) -> None:
        names = {q.name for q in self.get_metadata(QualifiedNameProvider, node.func, set())}
        if not names & SFT_CONFIG_NAMES:
            return
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "loss_type" and _is_old_literal(arg.value):
                self._handled.add(arg.value)

    def leave_SimpleString(self, original_node: cst.SimpleString, updated_node: cst.SimpleString) -> cst.BaseExpression:
        if original_node.evaluated_value != OLD or original_node in self._docstring_exprs:
            return updated_node
        if original_node in self._handled:
            self.note(original_node, f'SFTConfig(loss_type="{OLD}") -> loss_type="{NEW}"')
            quote_start = len(original_node.prefix) + len(original_node.quote)
            body = original_node.value[quote_start : -len(original_node.quote)]
            new_value = original_node.value[:quote_start] + body.replace(OLD, NEW) + original_node.quote
            return updated_node.with_changes(value=new_value)
        self.todo(
            original_node,
            f'"{OLD}" is a deprecated alias of "{NEW}" since TRL 1.15 (SFTTrainer rejects it): use "{NEW}"',
        )
        return updated_node


class ChunkedNllLossType(PythonMigration):
    fix_safety = "safe"
    summary = 'SFTConfig(loss_type="chunked_nll") -> "nll" (deprecated alias since TRL 1.15, removed in 2.0)'
    anchor = "sft-chunked-nll"
    triggers = (OLD,)
    transformer = _Transformer


MIGRATION = ChunkedNllLossType()
