"""removed-is-npu-available: `trl.is_npu_available` (gone in TRL 0.11) -> `transformers.utils.is_torch_npu_available`.

TRL 0.8 - 0.10 exported `is_npu_available` from `trl` and `trl.import_utils` (read from the 0.10.1 and 0.11.0 wheels).
Its body - `torch_npu` importable and `torch.npu.is_available()` - is what transformers' `is_torch_npu_available()`
checks with its default `check_device=False`, so the import moves there.
"""

from __future__ import annotations

from migrations.kinds.symbols import Moved, SymbolMigration

_NOTE = "removed from TRL in 0.11; transformers' function does the same check"


class RemovedIsNpuAvailable(SymbolMigration):
    summary = "trl.is_npu_available (removed in 0.11) -> transformers.utils.is_torch_npu_available"
    triggers = ("is_npu_available",)
    symbols = {p: Moved("transformers.utils", "is_torch_npu_available", _NOTE)
               for p in ("trl.is_npu_available", "trl.import_utils.is_npu_available")}


MIGRATION = RemovedIsNpuAvailable()
