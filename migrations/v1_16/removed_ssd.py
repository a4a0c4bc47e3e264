"""TRL 1.16 removed `trl.experimental.ssd` (`SSDConfig`, `SSDTrainer`) with no successor.

No stable trainer implements SSD, so the rule leaves the code and marks every import and use with a TODO; a repository
that must keep SSD stays on TRL 1.15 (`--target-trl 1.15` keeps this code untouched).
"""

from __future__ import annotations

from migrations.kinds.symbols import SymbolMigration

_MSG = "trl.experimental.ssd was removed in TRL 1.16 with no successor: keep TRL 1.15 for this code"


class RemovedSSD(SymbolMigration):
    fix_safety = "safe"
    summary = "trl.experimental.ssd (removed in 1.16, no successor) -> TODO"
    triggers = ("ssd",)
    removed_modules = {"trl.experimental.ssd": _MSG}


MIGRATION = RemovedSSD()
