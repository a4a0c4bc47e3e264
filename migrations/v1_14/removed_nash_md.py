"""TRL 1.14 removed `trl.experimental.nash_md` (#7255, with its `GeometricMixtureWrapper`) with no successor: Nash-MD
code moves to `compat.trl.NashMDTrainer` / `NashMDConfig`.

Choice: the closest online preference trainer, `OnlineDPOTrainer`, optimises another objective (no mixture policy, no
self-play), so swapping it in would silently change what a run optimises. The rule keeps Nash-MD: `compat.trl`
resolves to TRL's own trainer on TRL <= 1.13 and to the reference implementation (`reference_impl.NashMDTrainer`,
same constructor and config fields as TRL 1.13) on 1.14+. With `--target-trl 1.13` the rule does not run. Any other
name of the package (`GeometricMixtureWrapper`, ...) is marked.
"""

from __future__ import annotations

from migrations.kinds.symbols import Moved, SymbolMigration

_MOD = "trl.experimental.nash_md"


class RemovedNashMD(SymbolMigration):
    summary = ("trl.experimental.nash_md (removed in 1.14) -> compat.trl.NashMDTrainer/NashMDConfig (reference Nash-MD "
               "on 1.14+)")
    triggers = ("nash_md",)
    removed_modules = {_MOD: "trl.experimental.nash_md was removed in TRL 1.14; use compat.trl.NashMDTrainer/"
                             "NashMDConfig"}
    symbols = {
        f"{_MOD}.NashMDTrainer": Moved("compat.trl", "NashMDTrainer", "the reference Nash-MD trainer on TRL >= 1.14"),
        f"{_MOD}.NashMDConfig": Moved("compat.trl", "NashMDConfig"),
    }


MIGRATION = RemovedNashMD()
