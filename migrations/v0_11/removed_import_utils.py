"""removed-import-utils: `trl.is_npu_available` / `trl.is_xpu_available` (gone in TRL 0.11) -> their successors.

TRL 0.8 - 0.10 exported both from `trl` and `trl.import_utils` (read from the 0.10.1 and 0.11.0 wheels):
* `is_npu_available()` checked `torch_npu` importable and `torch.npu.is_available()`: what transformers'
  `transformers.utils.is_torch_npu_available()` checks with its default `check_device=False`;
* `is_xpu_available()` returned `accelerate.utils.is_xpu_available()` whenever accelerate >= 0.20 was installed, which
  every supported target guarantees (its floor is accelerate 1.10+), so the import moves there.
"""

from __future__ import annotations

from migrations.kinds.symbols import Moved, SymbolMigration

_NPU = "removed from TRL in 0.11; transformers' function does the same check"
_XPU = "removed from TRL in 0.11; TRL's function returned accelerate's with accelerate >= 0.20"


class RemovedImportUtils(SymbolMigration):
    summary = "trl.is_npu_available / is_xpu_available (removed in 0.11) -> transformers / accelerate successors"
    triggers = ("is_npu_available", "is_xpu_available")
    symbols = {
        **{p: Moved("transformers.utils", "is_torch_npu_available", _NPU)
           for p in ("trl.is_npu_available", "trl.import_utils.is_npu_available")},
        **{p: Moved("accelerate.utils", "is_xpu_available", _XPU)
           for p in ("trl.is_xpu_available", "trl.import_utils.is_xpu_available")},
    }


MIGRATION = RemovedImportUtils()
