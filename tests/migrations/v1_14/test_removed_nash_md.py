"""`removed-nash-md`: before/after and no-op cases."""

from __future__ import annotations

from migrations.v1_14.removed_nash_md import MIGRATION as NASH
from tests.migrations._driver import assert_no_successor, noop, run


def test_import_and_use_marked():
    assert_no_successor(NASH, "trl.experimental.nash_md", "NashMDTrainer", "1.14")


def test_module_import_forms():
    out, _ = run(NASH, """\
        import trl.experimental.nash_md as nm
        from trl.experimental import nash_md
        t = nm.NashMDTrainer(model)
    """)
    assert out.count("# TODO(trl-compat): trl.experimental.nash_md was removed") == 3


def test_noops():
    noop(NASH, "from trl import OnlineDPOTrainer\nnash_md = 1\n")
