"""Before/after and no-op cases for `rloo-v1-to-rloo` (RLOO v1, TRL 0.11-0.21 -> the 0.22+ RLOOTrainer)."""

from __future__ import annotations

from migrations.v0_22.rloo_v1_to_rloo import MIGRATION as RULE
from migrations.v0_22.rloo_v1_to_rloo import v1_default
from tests.migrations._driver import check, noop, run


def test_trainer_call_keywords():
    out, findings = run(RULE, """\
        from trl import RLOOTrainer
        trainer = RLOOTrainer(config=cfg, tokenizer=tok, policy=p, ref_policy=ref, reward_model=rm, train_dataset=ds)
    """)
    assert "    model=p,\n    reward_funcs=rm,\n    train_dataset=ds,\n    reward_processing_classes=tok,\n)" in out
    assert "ref_policy" not in out.splitlines()[-1]
    messages = [f.message for f in findings if f.severity == "manual"]
    assert messages == ["ref_policy= dropped: v2 reloads the reference from model's path",
                        "train_dataset=: v2 needs a prompt column, not input_ids"]


def test_config_fields_renamed_dropped_and_old_defaults():
    findings = check(RULE, """\
        from trl import RLOOConfig, RLOOTrainer
        cfg = RLOOConfig(output_dir="o", rloo_k=4, kl_coef=0.1, total_episodes=100, response_length=20)
        print(cfg.rloo_k, cfg.num_ppo_epochs)
        RLOOTrainer(config=cfg, processing_class=tok, policy=p, reward_model=rm)
    """, """\
        from trl import RLOOConfig, RLOOTrainer
        # TODO(trl-compat): kl_coef= -> beta=: v1 KL was in the reward, now in the loss [rloo-v1-to-rloo]
        # TODO(trl-compat): removed RLOO v1 fields: total_episodes=100 (set max_steps) [rloo-v1-to-rloo]
        # TODO(trl-compat): set bf16=, logging_steps=: v1 defaults differ between TRL... [rloo-v1-to-rloo]
        # TODO(trl-compat): batch sizes count completions now [rloo-v1-to-rloo]
        cfg = RLOOConfig(
            output_dir="o",
            num_generations=4,
            beta=0.1,
            max_completion_length=20,
            learning_rate=5e-05,
            temperature=0.7,
            num_iterations=4,
            gradient_checkpointing=False,
        )
        print(cfg.num_generations, cfg.num_iterations)
        RLOOTrainer(args=cfg, processing_class=tok, model=p, reward_funcs=rm, reward_processing_classes=tok)
    """)
    assert any("per_device_train_batch_size" in f.message for f in findings)


def test_old_defaults_come_from_the_atlas():
    assert (v1_default("temperature"), v1_default("response_length"), v1_default("num_ppo_epochs")) == \
        ("0.7", "53", "4")
    assert v1_default("logging_steps") is None  # 500 up to 0.18, 10 from 0.19: no single v1 default
    assert v1_default("logging_steps", ("0.14.0", "0.15.2")) == "500"


def test_the_repository_pin_decides_release_dependent_defaults(tmp_path):
    (tmp_path / "requirements.txt").write_text("trl==0.19.1\n", encoding="utf-8")
    (tmp_path / ".git").mkdir()
    out, _ = run(RULE, """\
        from trl import RLOOConfig
        cfg = RLOOConfig(output_dir="o", rloo_k=2)
    """, path=str(tmp_path / "train.py"))
    # 0.19.1: bf16=None and logging_steps=10 are 1.16's defaults too; nothing to write or mark for them
    assert "bf16" not in out and "logging_steps" not in out and "temperature=0.7" in out


def test_parsed_config_reads_and_trainer_attributes():
    out, findings = run(RULE, """\
        from transformers import HfArgumentParser
        from trl import ModelConfig
        from trl.trainer.rloo_trainer import RLOOConfig, RLOOTrainer

        parser = HfArgumentParser((RLOOConfig, ModelConfig))
        config, model_config = parser.parse_args_into_dataclasses()
        k = config.rloo_k
        path = config.sft_model_path
        trainer = RLOOTrainer(config=config, tokenizer=tok, policy=p, ref_policy=r, reward_model=rm)
        trainer.generate_completions()
    """)
    assert "k = config.num_generations" in out and "path = config.sft_model_path" in out
    manual = [f.message for f in findings if f.severity == "manual"]
    assert "parsed RLOOConfig: v1 flags and defaults changed" in manual
    assert "RLOOConfig.sft_model_path is gone: keep it in the script's own arguments" in manual
    assert "trainer.generate_completions: v1 RLOO API, gone in 0.25" in manual


def test_aliased_import_and_both_given():
    out, _ = run(RULE, """\
        import trl as t
        t.RLOOTrainer(config=c, policy=p, model=m, reward_model=rm)
    """)
    assert "# TODO(trl-compat): both policy= and model= given" in out and "config=c, policy=p" in out
    # besteaydemir/vlm-rl: nothing is edited, so no marker says a keyword was dropped or renamed (they stay)
    out, findings = run(RULE, """\
        from trl import RLOOTrainer
        RLOOTrainer(config=c, policy=p, ref_policy=r, reward_model=rm, train_dataset=d, processing_class=pc, tokenizer=t)
    """)
    assert out.splitlines()[-1] == ("RLOOTrainer(config=c, policy=p, ref_policy=r, reward_model=rm, train_dataset=d, "
                                    "processing_class=pc, tokenizer=t)")
    assert [f.message for f in findings] == ["both tokenizer= and processing_class= given: keep processing_class="]
    out, _ = run(RULE, """\
        from trl import RLOOTrainer as R
        R(config=c, policy=p, reward_model=rm)
    """)
    assert "R(args=c, model=p, reward_funcs=rm)" in out


def test_positional_v1_call_is_only_marked():
    out, findings = run(RULE, """\
        from trl import RLOOTrainer
        RLOOTrainer(cfg, tok, policy=p, ref_policy=r, reward_model=rm)
    """)
    assert "RLOOTrainer(cfg, tok, policy=p, ref_policy=r, reward_model=rm)" in out
    assert [f.severity for f in findings] == ["manual"]


def test_noops():
    # RLOO v2 code (already migrated)
    noop(RULE, """\
        from trl import RLOOConfig, RLOOTrainer
        cfg = RLOOConfig(output_dir="o", num_generations=4, beta=0.0)
        trainer = RLOOTrainer(model="m", reward_funcs=rm, args=cfg, train_dataset=ds)
        trainer.train()
    """)
    # a local class named RLOOTrainer / RLOOConfig
    noop(RULE, """\
        class RLOOConfig:
            def __init__(self, **kw): ...
        class RLOOTrainer:
            def __init__(self, **kw): ...
        cfg = RLOOConfig(rloo_k=2, kl_coef=0.1)
        RLOOTrainer(config=cfg, policy=p, ref_policy=r, reward_model=rm)
    """)
    # shadowed import, another package's RLOOTrainer
    noop(RULE, """\
        from trl import RLOOTrainer
        from mylib import RLOOTrainer
        RLOOTrainer(config=cfg, policy=p, reward_model=rm)
    """)
    noop(RULE, """\
        from openrlhf import RLOOTrainer, RLOOConfig
        RLOOTrainer(config=RLOOConfig(rloo_k=2), policy=p, reward_model=rm)
    """)
    # a v2 file: a script's own dataclass field named rloo_k is not a config read
    noop(RULE, """\
        from trl import RLOOTrainer
        args = MyArgs()
        print(args.rloo_k)
        RLOOTrainer(model="m", reward_funcs=rm, args=cfg)
    """)


def test_a_v1_subclass_constructor_call_is_marked_not_rewritten():
    """unpaired-rlhf's UnpairedRLOOTrainer(RLOOTrainer) passes v1 keywords to `super().__init__` and overrides
    `train` with v1's loop: the call is marked with the v2 keywords for the ones it passes, and left as it is."""
    src = """\
        from trl import RLOOTrainer


        class Unpaired(RLOOTrainer):
            def __init__(self, config, processing_class, policy, ref_policy, reward_model, train_dataset):
                super().__init__(config=config, processing_class=processing_class, policy=policy,
                                 ref_policy=ref_policy, reward_model=reward_model, train_dataset=train_dataset)
    """
    out, findings = run(RULE, src)
    [msg] = [f.message for f in findings if "Unpaired subclasses the v1 RLOOTrainer" in f.message]
    assert msg.startswith("RLOOTrainer.__init__ (TRL 0.22+) takes args= not config=, model= not policy=, "
                          "reward_funcs= not reward_model=, no ref_policy=;")
    assert "# TODO(trl-compat): RLOOTrainer.__init__ (TRL 0.22+) takes args= not" in out
    assert "super().__init__(config=config, processing_class=processing_class, policy=policy," in out
    explicit = src.replace("super().__init__(", "RLOOTrainer.__init__(self, ").replace(
        "                                 ref_policy", "                                     ref_policy")
    _, findings = run(RULE, explicit)
    assert any("Unpaired subclasses the v1 RLOOTrainer" in f.message for f in findings)


def test_subclass_noops():
    noop(RULE, """\
        from trl import RLOOTrainer


        class Mine(RLOOTrainer):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, model=kwargs.pop("model"), **kwargs)
    """)
    noop(RULE, """\
        from mylib import RLOOTrainer


        class Mine(RLOOTrainer):
            def __init__(self, config, policy):
                super().__init__(config=config, policy=policy)
    """)
    noop(RULE, """\
        from trl import RLOOTrainer


        class Helper:
            def __init__(self, config, policy):
                super().__init__(config=config, policy=policy)
    """)


def test_a_config_that_feeds_the_projects_own_v1_trainer_is_kept_and_marked(tmp_path):
    """Crazytieguy/codenames-oversight: `rloo_trainer.py` is a copy of TRL 0.9.6's RLOOTrainer on
    `transformers.Trainer` reading v1 fields of TRL's `RLOOConfig` (`args.rloo_k`, ...); `rloo.py` builds that config
    with v1 fields and hands it to the copy. Rewriting the config for TRL's 0.22+ trainer (`rloo_k=` ->
    `num_generations=`) broke the copy with no marker: both files now keep their code, marked at the import."""
    from compat.migrate.engine import migrate_source

    trainer = ("from transformers import Trainer\nfrom trl.trainer.rloo_config import RLOOConfig\n\n\n"
               "class RLOOTrainer(Trainer):\n    def __init__(self, config: RLOOConfig, tokenizer, model) -> None:\n"
               "        self.args = config\n        self.k = config.rloo_k\n")
    script = ("from trl.trainer.rloo_config import RLOOConfig\n\nfrom .rloo_trainer import RLOOTrainer\n\n"
              "config = RLOOConfig(output_dir='o', rloo_k=4, kl_coef=0.1, response_length=20)\n"
              "trainer = RLOOTrainer(config=config, tokenizer=tok, model=model)\n")
    (tmp_path / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "rloo_trainer.py").write_text(trainer, encoding="utf-8")
    for name, source in (("rloo_trainer.py", trainer), ("rloo.py", script)):
        result = migrate_source(source, rules=[RULE], path=str(tmp_path / name), verify_idempotent=True)
        assert result.ok, result.errors
        lines = result.text.splitlines(keepends=True)
        [mark] = [n for n, line in enumerate(lines) if line.startswith("# TODO(trl-compat): RLOOConfig feeds this "
                                                                       "project's own trainer")]
        assert lines[mark + 1] == "from trl.trainer.rloo_config import RLOOConfig\n"
        assert "".join(lines[:mark] + lines[mark + 1:]) == source  # nothing else changes
        [finding] = [f for f in result.findings if f.severity == "manual"]
        assert "(RLOOTrainer, a transformers.Trainer subclass" in finding.message
    # TRL's own RLOOTrainer beside a Trainer subclass of the project: migrated as before
    own = ("from transformers import Trainer\nfrom trl import RLOOConfig, RLOOTrainer\n\n\nclass Helper(Trainer):\n"
           "    pass\n\n\nRLOOTrainer(config=RLOOConfig(output_dir='o', rloo_k=4), policy=p, reward_model=rm)\n")
    result = migrate_source(own, rules=[RULE], path=str(tmp_path / "x.py"))
    assert "num_generations=4" in result.text and "RLOOConfig feeds" not in result.text
    # no v1 field in sight (a project trainer on TRL's 0.22+ RLOOConfig): nothing to say
    noop(RULE, "from transformers import Trainer\nfrom trl import RLOOConfig\n\n\nclass Mine(Trainer):\n"
               "    def __init__(self, args: RLOOConfig):\n        self.n = args.num_generations\n")
