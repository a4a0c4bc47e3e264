"""TRL 1.14 removed `trl.experimental.gspo_token` (#7331): GSPO-token -> stable `GRPOTrainer` with sequence-level IS.

The experimental trainer added `importance_sampling_level="sequence_token"` (GSPO-token: the sequence-level ratio,
with a per-token gradient path). With GRPO's advantages, which are one value per sequence, GSPO-token and GSPO have the
same gradient (GSPO paper, section 4.3), and TRL's removal PR names `GRPOConfig(importance_sampling_level="sequence")`
as the successor. The rule rewrites the import to `trl.GRPOTrainer` and `importance_sampling_level="sequence_token"`
in any `GRPOConfig(...)` call of the file to `"sequence"` (stable GRPO raises on `"sequence_token"`). A subclass that
fed per-token advantages would differ; MIGRATION.md says so.
"""

from __future__ import annotations

import libcst as cst

from migrations.kinds.cst import kwarg, string_value
from migrations.kinds.imports import imported_names
from migrations.kinds.symbols import Moved, SymbolMigration, SymbolTransformer

GRPO_CONFIGS = frozenset({
    "trl.GRPOConfig", "trl.trainer.GRPOConfig", "trl.trainer.grpo_config.GRPOConfig",
})


class GSPOToken(SymbolMigration):
    summary = 'trl.experimental.gspo_token.GRPOTrainer -> trl.GRPOTrainer + importance_sampling_level="sequence"'
    triggers = ("gspo_token", "sequence_token")
    removed_modules = {"trl.experimental.gspo_token": "trl.experimental.gspo_token was removed in TRL 1.14; use "
                                                      "trl.GRPOTrainer with importance_sampling_level='sequence'"}
    symbols = {"trl.experimental.gspo_token.GRPOTrainer": Moved("trl", "GRPOTrainer")}

    def wants_call(self, v: cst.CSTVisitor, call: cst.Call) -> bool:
        return _sequence_token_arg(v, call) is not None

    def other_call(self, t: SymbolTransformer, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if _sequence_token_arg(t, original) is None:
            return updated
        arg = kwarg(updated, "importance_sampling_level")
        assert arg is not None and isinstance(arg.value, cst.SimpleString)
        new_value = arg.value.with_changes(value=arg.value.value.replace("sequence_token", "sequence"))
        t.note(original, 'importance_sampling_level="sequence_token" -> "sequence" (GSPO-token == GSPO with '
                         "sequence-level advantages)")
        return updated.with_changes(args=[a.with_changes(value=new_value) if a is arg else a for a in updated.args])


def _sequence_token_arg(v: cst.CSTVisitor, call: cst.Call) -> cst.Arg | None:
    """The `importance_sampling_level="sequence_token"` argument of a `GRPOConfig(...)` call, if any."""
    arg = kwarg(call, "importance_sampling_level")
    if arg is None or not isinstance(arg.value, cst.SimpleString) or string_value(arg.value) != "sequence_token":
        return None
    return arg if imported_names(v, call.func) & GRPO_CONFIGS else None


MIGRATION = GSPOToken()
