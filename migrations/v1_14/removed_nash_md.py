"""TRL 1.14 removed `trl.experimental.nash_md` (#7255, with its `GeometricMixtureWrapper`) with no successor.

Nash-MD's mixture-policy self-play has no stable counterpart; the closest online preference trainer is
`OnlineDPOTrainer` (`compat.trl.OnlineDPOTrainer`), which optimises a different objective. The rule leaves the code and
marks every import and use with a TODO.
"""

from __future__ import annotations

from migrations.kinds.symbols import SymbolMigration

_MSG = (
    "trl.experimental.nash_md was removed in TRL 1.14 with no successor: keep TRL 1.13 for this code, or move to "
    "compat.trl.OnlineDPOTrainer (a different objective)"
)


class RemovedNashMD(SymbolMigration):
    fix_safety = "safe"
    summary = "trl.experimental.nash_md (removed in 1.14, no successor) -> TODO"
    triggers = ("nash_md",)
    removed_modules = {"trl.experimental.nash_md": _MSG}


MIGRATION = RemovedNashMD()
