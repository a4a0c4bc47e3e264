"""`removed-prm`: before/after and no-op cases."""

from __future__ import annotations

from migrations.v1_14.removed_prm import MIGRATION as PRM
from tests.migrations._driver import assert_no_successor, noop


def test_import_and_use_marked():
    assert_no_successor(PRM, "trl.experimental.prm", "PRMTrainer", "1.14")


def test_noops():
    noop(PRM, "from trl import RewardTrainer\nprm = RewardTrainer\n")
