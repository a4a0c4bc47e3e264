"""TRL 1.14 removed `trl.experimental.xpo` (Exploratory Preference Optimization) with no successor: XPO code moves to
`compat.trl.XPOTrainer` / `XPOConfig`.

Choice: XPO is Online DPO plus an exploration bonus (`alpha`), so `OnlineDPOTrainer` would run, but dropping the
bonus changes the method. The rule keeps XPO: `compat.trl` resolves to TRL's own XPO trainer on TRL <= 1.13 and to the
reference implementation (`reference_impl.XPOTrainer`, same constructor and config fields as TRL 1.13) on 1.14+. With
`--target-trl 1.13` the rule does not run and `trl.experimental.xpo` stays. Any other name of the package is marked.
"""

from __future__ import annotations

from migrations.kinds.symbols import Moved, SymbolMigration

_MOD = "trl.experimental.xpo"


class RemovedXPO(SymbolMigration):
    summary = "trl.experimental.xpo (removed in 1.14) -> compat.trl.XPOTrainer/XPOConfig (reference XPO on 1.14+)"
    triggers = ("xpo",)
    removed_modules = {_MOD: "trl.experimental.xpo was removed in TRL 1.14; use compat.trl.XPOTrainer/XPOConfig"}
    symbols = {
        f"{_MOD}.XPOTrainer": Moved("compat.trl", "XPOTrainer", "the reference XPO trainer on TRL >= 1.14"),
        f"{_MOD}.XPOConfig": Moved("compat.trl", "XPOConfig"),
    }


MIGRATION = RemovedXPO()
