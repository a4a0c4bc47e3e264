"""removed-trainer-prepare-deepspeed: `trl.trainer.utils.prepare_deepspeed` (gone in TRL 1.1) -> the `compat.trl` copy.

TRL 0.9.2 - 1.0.0 had `trl.trainer.utils.prepare_deepspeed(model, per_device_train_batch_size, fp16=False,
bf16=False)`, the same code in every release (read from the 0.9.6, 0.11.4, 0.12.2, 0.19.1, 0.26.2 and 1.0.0 wheels;
only docstrings and a return annotation differ). The one left, `trl.models.utils.prepare_deepspeed(model,
accelerator)`, takes other arguments and reads the precision from the accelerator's DeepSpeed plugin, so a call is
not rewritten to it: the import moves to `compat.trl.prepare_deepspeed`, the 1.0.0 function, and calls stay as they
are (the projects that do this keep their own copy of TRL's PPOv2 / RLOO / Online DPO trainer).
`trl.models.utils.prepare_deepspeed` itself exists on every target and is left alone.
"""

from __future__ import annotations

from migrations.kinds.symbols import Moved, SymbolMigration

_WHY = ("trl.trainer.utils.prepare_deepspeed(model, batch_size, fp16, bf16) was removed in TRL 1.1 "
        "(trl.models.utils.prepare_deepspeed(model, accelerator) takes other arguments); trl-compat keeps the 1.0 "
        "function (the project now needs trl-compat)")


class RemovedTrainerPrepareDeepspeed(SymbolMigration):
    summary = "trl.trainer.utils.prepare_deepspeed (removed in 1.1) -> compat.trl.prepare_deepspeed (the 1.0 function)"
    triggers = ("prepare_deepspeed",)
    symbols = {"trl.trainer.utils.prepare_deepspeed": Moved("compat.trl", "prepare_deepspeed", _WHY)}


MIGRATION = RemovedTrainerPrepareDeepspeed()
