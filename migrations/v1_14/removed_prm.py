"""TRL 1.14 removed `trl.experimental.prm` (#7133), the process reward model trainer, with no successor.

A step-level reward model cannot be expressed with `RewardTrainer` (one score per sequence) without changing the data
and the model head, so the rule marks every import and use with a TODO.
"""

from __future__ import annotations

from migrations.kinds.symbols import SymbolMigration

_MSG = (
    "trl.experimental.prm was removed in TRL 1.14 with no successor: keep TRL 1.13 for this code; trl.RewardTrainer "
    "scores whole sequences, not steps"
)


class RemovedPRM(SymbolMigration):
    fix_safety = "safe"
    summary = "trl.experimental.prm (removed in 1.14, no successor) -> TODO"
    triggers = ("prm",)
    removed_modules = {"trl.experimental.prm": _MSG}


MIGRATION = RemovedPRM()
