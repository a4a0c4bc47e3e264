"""`removed-xpo`: before/after and no-op cases."""

from __future__ import annotations

from migrations.v1_14.removed_xpo import MIGRATION as XPO
from tests.migrations._driver import assert_no_successor, noop


def test_import_and_use_marked():
    assert_no_successor(XPO, "trl.experimental.xpo", "XPOTrainer", "1.14")


def test_noops():
    noop(XPO, "from trl.experimental.online_dpo import OnlineDPOTrainer\nxpo = 1\n")
