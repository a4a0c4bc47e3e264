"""get-kbit-device-map: `trl.get_kbit_device_map` (gone in TRL 1.8) -> `compat.trl.get_kbit_device_map`.

TRL <= 1.7 exported `get_kbit_device_map()` from `trl` and `trl.trainer.utils` (read from the 1.7.1 and 1.8.0 wheels):
`{"": PartialState().local_process_index}` when CUDA or XPU is available, else None. The example scripts passed it as
`device_map=` when loading k-bit models. `compat.trl.get_kbit_device_map` is a copy of the 1.7 body (TRL 0.8 returned
`{"": "xpu:<index>"}` on XPU; the index is the same). `get_quantization_config` / `get_peft_config` still exist on
every target and are left alone.
"""

from __future__ import annotations

from migrations.kinds.symbols import Moved, SymbolMigration

_NOTE = "removed from TRL in 1.8; trl-compat keeps the 1.7 function (the project now needs trl-compat)"


class GetKbitDeviceMap(SymbolMigration):
    summary = "trl.get_kbit_device_map (removed in 1.8) -> compat.trl.get_kbit_device_map"
    triggers = ("get_kbit_device_map",)
    symbols = {p: Moved("compat.trl", "get_kbit_device_map", _NOTE)
               for p in ("trl.get_kbit_device_map", "trl.trainer.get_kbit_device_map",
                         "trl.trainer.utils.get_kbit_device_map")}


MIGRATION = GetKbitDeviceMap()
