"""`trl.losses` existed in TRL 1.13 only (fused linear DPO/KTO/GRPO/JSD losses); 1.14 removed the whole package.

Code importing it moves to `compat.losses`, which gives TRL's class on 1.13 and `reference_impl.losses`' adapter
(same constructor and forward signature as TRL 1.13) on 1.14+. A run targeting TRL 1.13 keeps `trl.losses`
(`release = "1.14"`).
"""

from __future__ import annotations

from migrations.kinds.symbols import Moved, SymbolMigration

_NAMES = ("FusedLinearDPOLoss", "FusedLinearKTOLoss", "FusedLinearGRPOLoss", "FusedLinearJSDLoss")


class TRLLosses(SymbolMigration):
    summary = "trl.losses (1.13 only) -> compat.losses (TRL's on 1.13, reference_impl's on 1.14+)"
    triggers = ("losses",)
    removed_modules = {
        "trl.losses": "trl.losses exists in TRL 1.13 only; this name has no stable home: import the losses you use "
                      "from compat.losses",
    }
    symbols = {f"trl.losses.{n}": Moved("compat.losses", n) for n in _NAMES}


MIGRATION = TRLLosses()
