"""TRL 1.14 removed `trl.experimental.xpo` (Exploratory Preference Optimization) with no successor.

XPO is Online DPO plus an exploration bonus (`alpha`); without the bonus it is `OnlineDPOTrainer`, but dropping the
bonus changes the method, so the rule marks every import and use with a TODO instead of rewriting.
"""

from __future__ import annotations

from migrations.kinds.symbols import SymbolMigration

_MSG = (
    "trl.experimental.xpo was removed in TRL 1.14 with no successor: keep TRL 1.13 for this code, or use "
    "compat.trl.OnlineDPOTrainer/OnlineDPOConfig (XPO without its exploration bonus alpha)"
)


class RemovedXPO(SymbolMigration):
    fix_safety = "safe"
    summary = "trl.experimental.xpo (removed in 1.14, no successor) -> TODO"
    triggers = ("xpo",)
    removed_modules = {"trl.experimental.xpo": _MSG}


MIGRATION = RemovedXPO()
