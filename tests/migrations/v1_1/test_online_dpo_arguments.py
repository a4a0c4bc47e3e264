"""Before/after and no-op cases for `online-dpo-arguments`."""

from __future__ import annotations

import pytest

from compat.migrate.engine import needs_of
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


def test_judge_routes_the_trainer_and_config_to_reference_impl():
    """A call that passes a judge: the file's TRL trainer and config come from reference_impl (TRL 1.0's judged
    Online DPO), the call is left as it is, nothing is marked."""
    findings = check(RULE, """\
        from trl.experimental.online_dpo import OnlineDPOConfig, OnlineDPOTrainer
        from compat.trl import PairRMJudge

        parser = TrlParser((ScriptArguments, OnlineDPOConfig, ModelConfig))
        t = OnlineDPOTrainer(model=model, reward_funcs=rm, judge=PairRMJudge(), args=args)
    """, """\
        from reference_impl import OnlineDPOConfig, OnlineDPOTrainer
        from compat.trl import PairRMJudge

        parser = TrlParser((ScriptArguments, OnlineDPOConfig, ModelConfig))
        t = OnlineDPOTrainer(model=model, reward_funcs=rm, judge=PairRMJudge(), args=args)
    """)
    assert not [f for f in findings if f.severity == "manual"]
    assert needs_of("import trl\n", "import reference_impl\n") == ["trl-compat"]  # the manifests get trl-compat


def test_judge_routing_every_import_form():
    # TRL 0.x top-level names in a parenthesised import, aliases, the old positional judge (4th)
    check(RULE, """\
        from trl import (
            ModelConfig,
            OnlineDPOConfig as Config,
            OnlineDPOTrainer,
        )

        t = OnlineDPOTrainer(model, ref, None, judge, Config("out"))
    """, """\
        from trl import ModelConfig
        from reference_impl import OnlineDPOConfig as Config, OnlineDPOTrainer

        t = OnlineDPOTrainer(model, ref, None, judge=judge, args=Config("out"))
    """)
    # attribute uses through `import trl`: both names, the call's keywords kept
    check(RULE, """\
        import trl

        cfg = trl.experimental.online_dpo.OnlineDPOConfig("out")
        t = trl.experimental.online_dpo.OnlineDPOTrainer(model, judge=j, args=cfg)
    """, """\
        import trl
        import reference_impl

        cfg = reference_impl.OnlineDPOConfig("out")
        t = reference_impl.OnlineDPOTrainer(model, judge=j, args=cfg)
    """)


@pytest.mark.parametrize("target", ["1.13.0", "1.14.0", "1.15.0", "1.16.0"])
def test_judge_routing_on_every_target_line(target):
    """No TRL line 1.13 - 1.16 takes judge=: the same rewrite on each."""
    check(RULE, """\
        from trl.experimental.online_dpo import OnlineDPOTrainer
        t = OnlineDPOTrainer(model, judge=j, args=cfg)
    """, """\
        from reference_impl import OnlineDPOTrainer
        t = OnlineDPOTrainer(model, judge=j, args=cfg)
    """, target=target)


def test_reward_model_with_a_judge_is_marked():
    """Up to TRL 0.22 the reward model won over the judge, from 0.23 the judge: the old keyword says neither."""
    out, findings = run(RULE, """\
        from trl import OnlineDPOTrainer
        t = OnlineDPOTrainer(model=model, reward_model=rm, judge=judge, args=args)
    """)
    assert out.splitlines()[:3] == [
        "from reference_impl import OnlineDPOTrainer",
        "# TODO(trl-compat): judge= wins over reward_model= since TRL 0.23 [online-dpo-arguments]",
        "t = OnlineDPOTrainer(model=model, reward_funcs=rm, judge=judge, args=args)"]
    assert [f.message for f in findings if f.severity == "manual"] == [
        ("judge= wins over reward_model= since TRL 0.23; up to 0.22 the reward model won when both were set: pass "
         "only one")]


def test_judge_not_routed_is_marked():
    # a subclass of TRL's trainer relies on TRL's internals: nothing moves, the judged call is marked
    out, findings = run(RULE, """\
        from trl.experimental.online_dpo import OnlineDPOTrainer

        class Mine(OnlineDPOTrainer):
            pass

        t = OnlineDPOTrainer(model, judge=j, args=cfg)
    """)
    assert out.startswith("from trl.experimental.online_dpo import OnlineDPOTrainer\n")
    assert "# TODO(trl-compat): judge= needs reference_impl.OnlineDPOTrainer" in out and "reference_impl import" not in out
    assert [f.severity for f in findings] == ["manual"]
    # compat.trl's class is TRL's on every target: marked, not rerouted behind the user's back
    out, findings = run(RULE, """\
        from compat.trl import OnlineDPOTrainer
        OnlineDPOTrainer(model, judge=j, args=cfg)
    """)
    assert out.splitlines()[0] == "from compat.trl import OnlineDPOTrainer"
    assert [f.severity for f in findings] == ["manual"] and "import it and OnlineDPOConfig" in findings[0].message


def _judged_noops(trainer: str, package: str, target: str = "1.16.0") -> None:
    """A judged call that is not TRL's or already migrated: a local class of the same name, a parameter shadowing
    the import, the reference_impl import."""
    config = trainer.removesuffix("Trainer") + "Config"
    noop(RULE, f"""\
        from trl.experimental.{package} import {config}

        class {trainer}:
            def __init__(self, *a, **k):
                pass

        {trainer}(model, judge=j, args={config}("o"))
    """, target=target)
    noop(RULE, f"""\
        from trl.experimental.{package} import {trainer}

        def build({trainer}, j):
            return {trainer}(model, judge=j)
    """, target=target)
    noop(RULE, f"""\
        from reference_impl import {config}, {trainer}
        {trainer}(model, judge=j, args={config}("o"))
    """, target=target)


def test_judge_noops():
    # no judge (or the old default judge=None, dropped): TRL's class stays
    check(RULE, """\
        from trl.experimental.online_dpo import OnlineDPOConfig, OnlineDPOTrainer
        t = OnlineDPOTrainer(model, judge=None, reward_funcs=rm, args=OnlineDPOConfig("o"))
    """, """\
        from trl.experimental.online_dpo import OnlineDPOConfig, OnlineDPOTrainer
        t = OnlineDPOTrainer(model, reward_funcs=rm, args=OnlineDPOConfig("o"))
    """)
    noop(RULE, """\
        from trl.experimental.online_dpo import OnlineDPOConfig, OnlineDPOTrainer
        t = OnlineDPOTrainer(model, reward_funcs=rm, args=OnlineDPOConfig("o"))
        judge(prompts, completions)
        other(judge=j)
    """)
    _judged_noops("OnlineDPOTrainer", "online_dpo")
    # a target the rule does not serve (TRL 1.0 still took judge=)
    noop(RULE, """\
        from trl import OnlineDPOTrainer
        OnlineDPOTrainer(model, judge=j, args=cfg)
    """, target="1.0.0")


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


def test_xpo_and_nash_md_fourth_positional_is_marked():
    out, findings = run(RULE, """\
        from trl.experimental.xpo import XPOTrainer
        from trl import NashMDTrainer
        XPOTrainer(model, ref, reward_funcs=rm, judge=judge, args=cfg)
        NashMDTrainer(model, ref, rm, cfg, train_ds, processing_class=tok)
    """)
    assert "XPOTrainer(model, ref, reward_funcs=rm, judge=judge, args=cfg)" in out  # routed, the call kept
    assert "NashMDTrainer(model, ref, rm, cfg, train_ds, processing_class=tok)" in out  # left as written
    messages = [f.message for f in findings if f.severity == "manual"]
    assert len(messages) == 1 and messages[0].startswith(
        "NashMDTrainer: positionals past the third are ambiguous (the fourth was judge in TRL 0.12 - 1.0")


def test_xpo_and_nash_md_judge_routes_to_reference_impl_on_1_13():
    """TRL 0.26.2's examples/scripts/xpo.py and nash_md.py on target 1.13: `compat.trl` would be TRL 1.13's class
    (no judge=) there, so the trainer and config come from reference_impl, which takes TRL 1.0's judge= (the same on
    every target, see below)."""
    findings = check(RULE, """\
        from trl.experimental.judges import HfPairwiseJudge, OpenAIPairwiseJudge, PairRMJudge
        from trl.experimental.nash_md import NashMDConfig, NashMDTrainer

        parser = TrlParser((ScriptArguments, NashMDConfig, ModelConfig))
        trainer = NashMDTrainer(model=model, ref_model=ref_model, reward_funcs=reward_model, judge=judge,
                                args=training_args, processing_class=tokenizer)
    """, """\
        from trl.experimental.judges import HfPairwiseJudge, OpenAIPairwiseJudge, PairRMJudge
        from reference_impl import NashMDConfig, NashMDTrainer

        parser = TrlParser((ScriptArguments, NashMDConfig, ModelConfig))
        trainer = NashMDTrainer(model=model, ref_model=ref_model, reward_funcs=reward_model, judge=judge,
                                args=training_args, processing_class=tokenizer)
    """, target="1.13.0")
    assert not [f for f in findings if f.severity == "manual"]
    # every import form: 0.x top level names with an alias, the module path, `import trl` attributes
    check(RULE, """\
        from trl import ModelConfig, XPOConfig as Config, XPOTrainer
        from trl.experimental.nash_md.nash_md_trainer import NashMDTrainer
        import trl

        t = XPOTrainer(model, judge=j, args=Config("out"))
        u = NashMDTrainer(model, judge=j, args=trl.experimental.nash_md.NashMDConfig("out"))
    """, """\
        from trl import ModelConfig
        from reference_impl import XPOConfig as Config, XPOTrainer
        from reference_impl import NashMDTrainer
        import trl
        import reference_impl

        t = XPOTrainer(model, judge=j, args=Config("out"))
        u = NashMDTrainer(model, judge=j, args=reference_impl.NashMDConfig("out"))
    """, target="1.13.0")
    # only the judged trainer moves: Online DPO without a judge keeps TRL's class
    check(RULE, """\
        from trl.experimental.online_dpo import OnlineDPOTrainer
        from trl.experimental.xpo import XPOConfig, XPOTrainer
        OnlineDPOTrainer(model, reward_funcs=rm, args=cfg)
        XPOTrainer(model, judge=j, args=XPOConfig("o"))
    """, """\
        from trl.experimental.online_dpo import OnlineDPOTrainer
        from reference_impl import XPOConfig, XPOTrainer
        OnlineDPOTrainer(model, reward_funcs=rm, args=cfg)
        XPOTrainer(model, judge=j, args=XPOConfig("o"))
    """, target="1.13.0")


@pytest.mark.parametrize("target", ["1.13.0", "1.14.0", "1.15.0", "1.16.0"])
def test_xpo_and_nash_md_judge_routing_on_every_target(target):
    """Routed on every target, TRL's class and compat.trl's alike (`experimental-trainer-imports` writes compat.trl
    on 1.14+ before this rule runs): reference_impl's is what `compat.trl` gives from 1.14, and the only judge-capable
    one on a TRL 1.13 the file may still run on. Calls without a judge keep their class."""
    check(RULE, """\
        from trl.experimental.xpo import XPOConfig, XPOTrainer
        from compat.trl import NashMDConfig, NashMDTrainer
        XPOTrainer(model, reward_model=rm, args=XPOConfig("o"))
        XPOTrainer(model, judge=j, args=XPOConfig("o"))
        NashMDTrainer(model, judge=j, args=NashMDConfig("o"))
    """, """\
        from reference_impl import NashMDConfig, NashMDTrainer, XPOConfig, XPOTrainer
        XPOTrainer(model, reward_funcs=rm, args=XPOConfig("o"))
        XPOTrainer(model, judge=j, args=XPOConfig("o"))
        NashMDTrainer(model, judge=j, args=NashMDConfig("o"))
    """, target=target)
    check(RULE, """\
        from compat.trl import PairRMJudge, XPOConfig, XPOTrainer
        XPOTrainer(model, judge=PairRMJudge(), args=XPOConfig("o"))
    """, """\
        from compat.trl import PairRMJudge
        from reference_impl import XPOConfig, XPOTrainer
        XPOTrainer(model, judge=PairRMJudge(), args=XPOConfig("o"))
    """, target=target)


def test_xpo_and_nash_md_judge_not_routed_is_marked():
    # reward_model= with judge=: which won depends on the TRL the code was written for (0.22: the reward model)
    out, findings = run(RULE, """\
        from trl import XPOTrainer
        XPOTrainer(model=model, reward_model=rm, judge=judge, args=args)
    """, target="1.13.0")
    assert out.splitlines()[:2] == [
        "from reference_impl import XPOTrainer",
        "# TODO(trl-compat): judge= wins over reward_model= since TRL 0.23 [online-dpo-arguments]"]
    assert [f.severity for f in findings if f.severity == "manual"] == ["manual"]
    out, _ = run(RULE, """\
        from trl import XPOTrainer
        XPOTrainer(model=model, reward_model=rm, judge=judge, args=args)
    """)  # the same ambiguity on 1.16
    assert "# TODO(trl-compat): judge= wins over reward_model= since TRL 0.23" in out
    # a subclass of TRL's trainer: nothing moves
    out, findings = run(RULE, """\
        from trl.experimental.nash_md import NashMDTrainer

        class Mine(NashMDTrainer):
            pass

        NashMDTrainer(model, judge=j, args=cfg)
    """, target="1.13.0")
    assert "reference_impl" not in out.splitlines()[0] and [f.severity for f in findings] == ["manual"]
    assert "port the subclass to reference_impl's" in findings[0].message
    # a subclass of compat.trl's class (TRL's on 1.13): nothing moves either
    out, findings = run(RULE, """\
        from compat.trl import XPOTrainer

        class Mine(XPOTrainer):
            pass

        XPOTrainer(model, judge=j, args=cfg)
    """)
    assert out.splitlines()[0] == "from compat.trl import XPOTrainer"
    assert [f.severity for f in findings] == ["manual"] and "port the subclass" in findings[0].message


def test_xpo_and_nash_md_judge_noops_on_1_13():
    _judged_noops("XPOTrainer", "xpo", "1.13.0")
    _judged_noops("NashMDTrainer", "nash_md", "1.13.0")
    noop(RULE, """\
        from nash_md import NashMDTrainer  # a local module of the same name
        NashMDTrainer(model, judge=j)
    """, target="1.13.0")
    check(RULE, """\
        from trl.experimental.xpo import XPOTrainer
        XPOTrainer(model, reward_funcs=rm, judge=None)
    """, """\
        from trl.experimental.xpo import XPOTrainer
        XPOTrainer(model, reward_funcs=rm)
    """, target="1.13.0")


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
