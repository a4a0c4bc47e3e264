"""TRL 1.14 removed `trl.experimental.prm` (#7133), the process reward model trainer, with no successor: PRM code
moves to `compat.trl.PRMTrainer` / `PRMConfig`.

Choice: `trl.RewardTrainer` scores whole sequences (one scalar per sequence, a sequence-classification head, paired
data), a process reward model one label per step (a token-classification head, step-labelled data), so no TRL 1.14+
trainer can take this code. The rule keeps the PRM objective: `compat.trl` resolves to TRL's own PRM trainer on
TRL <= 1.13 and to the reference implementation (`reference_impl.PRMTrainer`, TRL 1.13's constructor, config fields
and tokenization) on 1.14+. On a 1.13 target the rule does not run: `trl.experimental.prm` is kept.
"""

from __future__ import annotations

from migrations.kinds.symbols import Moved, SymbolMigration

_MOD = "trl.experimental.prm"


class RemovedPRM(SymbolMigration):
    summary = "trl.experimental.prm (removed in 1.14) -> compat.trl.PRMTrainer/PRMConfig (reference PRM on 1.14+)"
    triggers = ("prm",)
    removed_modules = {_MOD: "trl.experimental.prm was removed in TRL 1.14; use compat.trl.PRMTrainer/PRMConfig"}
    symbols = {
        **{f"{m}.PRMTrainer": Moved("compat.trl", "PRMTrainer", "the reference PRM trainer on TRL >= 1.14")
           for m in (_MOD, f"{_MOD}.prm_trainer")},
        **{f"{m}.PRMConfig": Moved("compat.trl", "PRMConfig") for m in (_MOD, f"{_MOD}.prm_config", f"{_MOD}.prm_trainer")},
        # the reward-accuracy metric of trl.trainer.utils, in this module since 0.27 (1.13.0's function)
        f"{_MOD}.prm_trainer.compute_accuracy": Moved("compat.trl", "compute_accuracy", "TRL 1.13's function"),
    }


MIGRATION = RemovedPRM()
