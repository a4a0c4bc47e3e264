"""TRL 1.15 removed `trl.trainer.sft_trainer.dft_loss`; the DFT loss is `SFTConfig(loss_type="dft")`.

The usual use was `SFTTrainer(..., compute_loss_func=dft_loss, args=SFTConfig(...))`. When the config is written
inline in that call (and sets no `loss_type`), the rule drops `compute_loss_func=dft_loss` and adds `loss_type="dft"`
to the `SFTConfig(...)`: the same loss computed inside the trainer, and no `compute_loss_func` deprecation warning on
1.15+; the import goes too when nothing else uses it. Every other use keeps working through `compat.trl.dft_loss` (TRL's function where it exists, a faithful copy
otherwise), with a TODO when it is passed as `compute_loss_func` to a config that is not written inline.
"""

from __future__ import annotations

import libcst as cst

from migrations.base import RuleContext
from migrations.kinds.cst import kwarg
from migrations.kinds.imports import drop_unused_import, imported_names
from migrations.kinds.options import SFT_CONFIGS
from migrations.kinds.symbols import Moved, SymbolMigration, SymbolTransformer

_OLD = "trl.trainer.sft_trainer.dft_loss"
_NAMES = frozenset({_OLD, "compat.trl.dft_loss"})
SFT_TRAINERS = frozenset({"trl.SFTTrainer", "trl.trainer.SFTTrainer", "trl.trainer.sft_trainer.SFTTrainer"})


class DFTLoss(SymbolMigration):
    summary = 'trl.trainer.sft_trainer.dft_loss (removed in 1.15) -> SFTConfig(loss_type="dft") / compat.trl.dft_loss'
    triggers = ("dft_loss",)
    symbols = {_OLD: Moved("compat.trl", "dft_loss", 'prefer SFTConfig(loss_type="dft")')}

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        module = super().transform(wrapper, ctx)
        if module is wrapper.module:
            return module
        # once every compute_loss_func=dft_loss became loss_type="dft", the import has no use left: drop it
        return drop_unused_import(module, "compat.trl", "dft_loss")

    def other_call(self, t: SymbolTransformer, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if not imported_names(t, original.func) & SFT_TRAINERS:
            return updated
        loss_arg = kwarg(original, "compute_loss_func")
        if loss_arg is None or not imported_names(t, loss_arg.value) & _NAMES:
            return updated
        args_arg = kwarg(updated, "args")
        config = args_arg.value if args_arg is not None else None
        if (not isinstance(config, cst.Call) or not imported_names(t, kwarg(original, "args").value.func) & SFT_CONFIGS
                or kwarg(config, "loss_type") is not None or any(a.star for a in config.args)):
            t.todo(original, 'set loss_type="dft" in the SFTConfig passed as args= and drop compute_loss_func=dft_loss '
                             "(compute_loss_func is deprecated since TRL 1.15)")
            return updated
        new_config = config.with_changes(args=[*_with_trailing(config.args), cst.Arg(
            keyword=cst.Name("loss_type"), value=cst.SimpleString('"dft"'),
            equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                  whitespace_after=cst.SimpleWhitespace("")))])
        new_loss = kwarg(updated, "compute_loss_func")
        args = []
        for a in updated.args:
            if a is new_loss:
                continue
            args.append(a.with_changes(value=new_config) if a is args_arg else a)
        if kwarg(updated, "compute_loss_func") is updated.args[-1] and args:
            args[-1] = args[-1].with_changes(comma=updated.args[-1].comma)
        t.note(original, 'compute_loss_func=dft_loss -> SFTConfig(loss_type="dft")')
        return updated.with_changes(args=args)


def _with_trailing(args: tuple[cst.Arg, ...] | list[cst.Arg]) -> list[cst.Arg]:
    out = list(args)
    if out and not isinstance(out[-1].comma, cst.Comma):
        out[-1] = out[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return out


MIGRATION = DFTLoss()
