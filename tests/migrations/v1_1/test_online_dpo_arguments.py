"""Before/after and no-op cases for `online-dpo-arguments`."""

from __future__ import annotations

from migrations.v1_1.online_dpo_arguments import MIGRATION as RULE
from tests.migrations._driver import check, noop, run


def test_renamed_keywords_and_old_positionals():
    check(RULE, """\
        from trl.experimental.online_dpo import OnlineDPOConfig, OnlineDPOTrainer

        t = OnlineDPOTrainer(model, ref, rm, None, cfg, reward_processing_class=rtok)
        u = OnlineDPOTrainer(model=model, reward_model=rm, args=cfg, processing_class=tok)
    """, """\
        from trl.experimental.online_dpo import OnlineDPOConfig, OnlineDPOTrainer

        t = OnlineDPOTrainer(model, ref, rm, args=cfg, reward_processing_classes=rtok)
        u = OnlineDPOTrainer(model=model, reward_funcs=rm, args=cfg, processing_class=tok)
    """)


def test_judge_is_marked():
    out, findings = run(RULE, """\
        from trl import OnlineDPOTrainer, PairRMJudge
        OnlineDPOTrainer(model, judge=PairRMJudge(), args=cfg)
    """)
    assert "# TODO(trl-compat): OnlineDPOTrainer(judge=) was removed in TRL 1.1" in out
    assert [f.severity for f in findings] == ["manual"]


def test_noops():
    noop(RULE, """\
        from trl.experimental.online_dpo import OnlineDPOTrainer
        OnlineDPOTrainer(model, ref, reward_funcs=rm, args=cfg, processing_class=tok)
        OnlineDPOTrainer(model, ref, rm)
    """)
    noop(RULE, """\
        import trl

        class OnlineDPOTrainer:
            def __init__(self, *a, **k):
                pass

        OnlineDPOTrainer(model, ref, rm, None, cfg, reward_model=rm)
        s = "OnlineDPOTrainer(reward_model=rm)"
    """)


def test_xpo_and_nash_md_0_11_keywords():
    """TRL 0.11.4's examples/scripts/xpo.py call: `reward_model=` maps to `reward_funcs=` (as TRL 0.23 did)."""
    check(RULE, """\
        from trl import NashMDTrainer, XPOTrainer

        t = XPOTrainer(model=model, ref_model=ref, reward_model=rm, args=cfg, processing_class=tok)
        u = NashMDTrainer(model, ref, reward_model=rm, judge=None, args=cfg)
    """, """\
        from trl import NashMDTrainer, XPOTrainer

        t = XPOTrainer(model=model, ref_model=ref, reward_funcs=rm, args=cfg, processing_class=tok)
        u = NashMDTrainer(model, ref, reward_funcs=rm, args=cfg)
    """)


def test_xpo_and_nash_md_after_the_removal_rules_and_experimental_paths():
    check(RULE, """\
        from compat.trl import XPOTrainer
        from trl.experimental.nash_md.nash_md_trainer import NashMDTrainer as N
        XPOTrainer(model, reward_model=rm)
        N(model, reward_model=rm)
    """, """\
        from compat.trl import XPOTrainer
        from trl.experimental.nash_md.nash_md_trainer import NashMDTrainer as N
        XPOTrainer(model, reward_funcs=rm)
        N(model, reward_funcs=rm)
    """)


def test_xpo_and_nash_md_judge_and_fourth_positional_are_marked():
    out, findings = run(RULE, """\
        from trl.experimental.xpo import XPOTrainer
        from trl import NashMDTrainer
        XPOTrainer(model, ref, reward_funcs=rm, judge=judge, args=cfg)
        NashMDTrainer(model, ref, rm, cfg, train_ds, processing_class=tok)
    """)
    assert "# TODO(trl-compat): XPOTrainer(judge=) was removed in TRL 1.1" in out
    assert "NashMDTrainer(model, ref, rm, cfg, train_ds, processing_class=tok)" in out  # left as written
    messages = [f.message for f in findings if f.severity == "manual"]
    assert len(messages) == 2 and messages[1].startswith(
        "NashMDTrainer: positionals past the third are ambiguous (the fourth was judge in TRL 0.12 - 1.0")


def test_xpo_and_nash_md_noops():
    noop(RULE, """\
        from trl.experimental.xpo import XPOTrainer
        XPOTrainer(model, ref, rm, cfg, reward_processing_classes=rtok)  # the 0.11 / 1.1 layout up to args
    """.replace("XPOTrainer(model, ref, rm, cfg,", "XPOTrainer(model, ref, rm, args=cfg,"))
    noop(RULE, """\
        from trl.experimental.xpo import XPOTrainer
        XPOTrainer(model, reward_processing_class=rtok)  # never an XPO keyword: the check reports it
    """)
    noop(RULE, """\
        from mylib import XPOTrainer

        class NashMDTrainer:
            pass

        XPOTrainer(model, reward_model=rm)
        NashMDTrainer(model, reward_model=rm)
    """)
    noop(RULE, """\
        from trl import XPOTrainer as NashMDTrainer
        def f(XPOTrainer):
            return XPOTrainer(model, reward_model=rm)
    """)
