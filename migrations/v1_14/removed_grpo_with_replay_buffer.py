"""TRL 1.14 removed `trl.experimental.grpo_with_replay_buffer` (#7132) with no successor.

The replay buffer re-used high-variance groups from earlier steps; stable `GRPOTrainer` has no equivalent, so the rule
cannot rewrite the code. It marks every import and use with a TODO that names the choices (stay on TRL 1.13, or move
to `GRPOTrainer` and drop the replay buffer) and reports them.
"""

from __future__ import annotations

from migrations.kinds.symbols import SymbolMigration

_MSG = (
    "trl.experimental.grpo_with_replay_buffer was removed in TRL 1.14 with no successor: keep TRL 1.13 for this "
    "code, or use trl.GRPOTrainer/GRPOConfig without the replay buffer"
)


class RemovedGRPOWithReplayBuffer(SymbolMigration):
    fix_safety = "safe"
    summary = "trl.experimental.grpo_with_replay_buffer (removed in 1.14, no successor) -> TODO"
    triggers = ("grpo_with_replay_buffer",)
    removed_modules = {"trl.experimental.grpo_with_replay_buffer": _MSG}


MIGRATION = RemovedGRPOWithReplayBuffer()
