"""`removed-grpo-with-replay-buffer`: before/after and no-op cases."""

from __future__ import annotations

from migrations.v1_14.removed_grpo_with_replay_buffer import MIGRATION as REPLAY
from tests.migrations._driver import assert_no_successor, noop


def test_import_and_use_marked():
    assert_no_successor(REPLAY, "trl.experimental.grpo_with_replay_buffer", "GRPOWithReplayBufferTrainer", "1.14")


def test_noops():
    noop(REPLAY, "from trl import GRPOTrainer\nreplay_buffer = []\n")
