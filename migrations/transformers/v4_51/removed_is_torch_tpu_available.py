"""transformers 4.51 removed `is_torch_tpu_available` (deprecated since 4.39; atlas: `transformers.is_torch_tpu_available`
last in 4.50). 4.56.2 has no function of that name anywhere (`utils/import_utils.py` of the wheel); 5.x brought a new
one back to `transformers.utils` (not the top level) that asks `torch.accelerator` for a TPU (5.24.0) instead of
importing `torch_xla` and probing `xla_device()`.

Its successor on 4.56.2 and every 5.x is `is_torch_xla_available(check_is_tpu=True)` (top level, atlas), but the
old default `check_device=True` probed a device where the new function reads an environment flag and the PJRT
device type: close, not provably the same, so each import and use is marked, not rewritten.
"""

from __future__ import annotations

from migrations.kinds.symbols import Gone, SymbolMigration

_PATHS = ("transformers.is_torch_tpu_available", "transformers.utils.is_torch_tpu_available",
          "transformers.utils.import_utils.is_torch_tpu_available", "transformers.file_utils.is_torch_tpu_available",
          "transformers.trainer_utils.is_torch_tpu_available", "transformers.training_args.is_torch_tpu_available")
MESSAGE = ("is_torch_tpu_available was removed in transformers 4.51: use is_torch_xla_available(check_is_tpu=True) "
           "(4.56 and 5.x; it reads the XLA device type instead of probing xla_device())")


class RemovedIsTorchTpuAvailable(SymbolMigration):
    summary = "transformers.is_torch_tpu_available (removed in 4.51): TODO naming is_torch_xla_available"
    triggers = ("is_torch_tpu_available",)
    requires = ("transformers",)
    symbols = {q: Gone(MESSAGE) for q in _PATHS}


MIGRATION = RemovedIsTorchTpuAvailable()
