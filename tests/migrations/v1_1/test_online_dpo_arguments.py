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
