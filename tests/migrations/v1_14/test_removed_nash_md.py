"""`removed-nash-md`: before/after and no-op cases."""

from __future__ import annotations

from migrations.v1_14.removed_nash_md import MIGRATION as NASH
from tests.migrations._driver import assert_moved_to_compat, noop, run


def test_every_import_form_moves_to_compat_and_look_alikes_stay():
    assert_moved_to_compat(NASH, "trl.experimental.nash_md", "NashMDTrainer", "NashMDConfig")


def test_geometric_mixture_wrapper_is_marked():
    out, findings = run(NASH, """\
        from trl.experimental.nash_md.nash_md_trainer import GeometricMixtureWrapper
        w = GeometricMixtureWrapper(model, ref, gen_config)
    """)
    assert out.count("# TODO(trl-compat): trl.experimental.nash_md was removed in TRL 1.14") == 2
    assert {f.anchor for f in findings} == {"removed-nash-md"}


def test_noops():
    noop(NASH, "from trl import OnlineDPOTrainer\nnash_md = 1\n")
