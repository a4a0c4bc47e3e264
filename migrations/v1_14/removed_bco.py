"""TRL 1.14 removed `trl.experimental.bco` (#7136): BCO code moves to `compat.trl.BCOTrainer` / `BCOConfig`.

Choice: TRL's removal note suggests `KTOTrainer` for unpaired preference data, but KTO is a different loss (no
learned reward shift, no density-ratio classifier), so swapping it in would silently change what a run optimises.
This rule keeps the BCO objective: `compat.trl` resolves to TRL's own BCO trainer on TRL <= 1.13 and to the reference
implementation (`reference_impl.BCOTrainer`, same constructor and config fields as TRL 1.13) on 1.14+. MIGRATION.md
explains how to switch to `KTOTrainer` deliberately.
"""

from __future__ import annotations

from migrations.kinds.symbols import Moved, SymbolMigration

_MOD = "trl.experimental.bco"


class RemovedBCO(SymbolMigration):
    summary = "trl.experimental.bco (removed in 1.14) -> compat.trl.BCOTrainer/BCOConfig (reference BCO on 1.14+)"
    triggers = ("bco",)
    removed_modules = {_MOD: "trl.experimental.bco was removed in TRL 1.14; use compat.trl.BCOTrainer/BCOConfig"}
    symbols = {
        f"{_MOD}.BCOTrainer": Moved("compat.trl", "BCOTrainer", "the reference BCO trainer on TRL >= 1.14"),
        f"{_MOD}.BCOConfig": Moved("compat.trl", "BCOConfig"),
    }


MIGRATION = RemovedBCO()
