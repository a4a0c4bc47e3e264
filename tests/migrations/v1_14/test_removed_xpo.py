"""`removed-xpo`: before/after and no-op cases."""

from __future__ import annotations

from migrations.v1_14.removed_xpo import MIGRATION as XPO
from tests.migrations._driver import assert_moved_to_compat, check, noop


def test_every_import_form_moves_to_compat_and_look_alikes_stay():
    assert_moved_to_compat(XPO, "trl.experimental.xpo", "XPOTrainer", "XPOConfig")


def test_guarded_import_and_alias_use():
    check(XPO, """\
        try:
            from trl.experimental.xpo import XPOConfig as Cfg
        except ImportError:
            Cfg = None
        cfg = Cfg(alpha=[1e-5, 1e-6])
    """, """\
        try:
            from compat.trl import XPOConfig as Cfg
        except ImportError:
            Cfg = None
        cfg = Cfg(alpha=[1e-5, 1e-6])
    """)


def test_noops():
    noop(XPO, "from trl.experimental.online_dpo import OnlineDPOTrainer\nxpo = 1\n")
