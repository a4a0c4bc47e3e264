"""removed-trainer-prepare-deepspeed: `trl.trainer.utils.prepare_deepspeed` (gone in TRL 1.1), marked.

TRL <= 1.0 had `trl.trainer.utils.prepare_deepspeed(model, per_device_train_batch_size, fp16=False, bf16=False)`
(read from the 1.0.0 and 1.1.0 wheels). The one left, `trl.models.utils.prepare_deepspeed(model, accelerator)`, takes
other arguments and reads the settings from the accelerator's DeepSpeed plugin, so calls are marked, not rewritten.
`trl.models.utils.prepare_deepspeed` itself still exists on every target and is left alone.
"""

from __future__ import annotations

from migrations.kinds.symbols import Gone, SymbolMigration

_MSG = ("trl.trainer.utils.prepare_deepspeed was removed in TRL 1.1: call "
        "trl.models.utils.prepare_deepspeed(model, accelerator)")


class RemovedTrainerPrepareDeepspeed(SymbolMigration):
    summary = "trl.trainer.utils.prepare_deepspeed (removed in 1.1) -> marked: trl.models.utils.prepare_deepspeed"
    triggers = ("prepare_deepspeed",)
    symbols = {"trl.trainer.utils.prepare_deepspeed": Gone(_MSG)}


MIGRATION = RemovedTrainerPrepareDeepspeed()
