"""removed-text-environment: `TextEnvironment` / `TextHistory` (gone in TRL 0.21), marked.

The tool-use environment of the PPO era (`trl.TextEnvironment`, `trl.environment`) was removed in 0.21 (read from the
0.20.0 and 0.21.0 wheels) without a drop-in successor: tool calling now lives in `GRPOTrainer(tools=[...])`.
"""

from __future__ import annotations

from migrations.kinds.symbols import Gone, SymbolMigration

_MSG = "TextEnvironment was removed in TRL 0.21: use GRPOTrainer(tools=[...]) for tool calling"


class RemovedTextEnvironment(SymbolMigration):
    summary = "trl.TextEnvironment / TextHistory / trl.environment (removed in 0.21) -> marked"
    triggers = ("TextEnvironment", "TextHistory", "environment")
    removed_modules = {"trl.environment": _MSG}
    symbols = {f"trl.{n}": Gone(_MSG) for n in ("TextEnvironment", "TextHistory")}


MIGRATION = RemovedTextEnvironment()
