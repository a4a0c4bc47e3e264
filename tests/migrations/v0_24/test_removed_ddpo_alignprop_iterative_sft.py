"""`removed-ddpo-alignprop-iterative-sft`: DDPO / AlignProp move to `compat.trl`, IterativeSFT is marked."""

from __future__ import annotations

from migrations.v0_24.removed_ddpo_alignprop_iterative_sft import MIGRATION as RULE
from tests.migrations._driver import check, noop, run


def test_ddpo_script_imports_move_to_compat_trl():
    findings = check(RULE, """\
        from trl import DDPOConfig, DDPOTrainer, DefaultDDPOStableDiffusionPipeline

        trainer = DDPOTrainer(DDPOConfig(), reward_fn, prompt_fn, DefaultDDPOStableDiffusionPipeline("sd"))
    """, """\
        from compat.trl import DDPOConfig, DDPOTrainer, DefaultDDPOStableDiffusionPipeline

        trainer = DDPOTrainer(DDPOConfig(), reward_fn, prompt_fn, DefaultDDPOStableDiffusionPipeline("sd"))
    """)
    assert findings and all(f.changed for f in findings)


def test_alignprop_script_with_the_aesthetic_scorer():
    check(RULE, """\
        from trl import AlignPropConfig, AlignPropTrainer, DefaultDDPOStableDiffusionPipeline
        from trl.models.auxiliary_modules import aesthetic_scorer

        AlignPropTrainer(AlignPropConfig(), aesthetic_scorer("id", "f.pth"), prompt_fn, pipe)
    """, """\
        from compat.trl import AlignPropConfig, AlignPropTrainer, DefaultDDPOStableDiffusionPipeline
        from compat.trl import aesthetic_scorer

        AlignPropTrainer(AlignPropConfig(), aesthetic_scorer("id", "f.pth"), prompt_fn, pipe)
    """)


def test_module_paths_aliases_and_attribute_uses():
    check(RULE, """\
        import trl
        from trl.trainer.ddpo_trainer import DDPOTrainer as T
        from trl.models.modeling_sd_base import DDPOStableDiffusionPipeline
        from trl.trainer.utils import PerPromptStatTracker

        class Pipe(DDPOStableDiffusionPipeline):
            pass

        T(trl.DDPOConfig(sample_num_steps=10), r, p, Pipe())
        tracker = PerPromptStatTracker(16, 16)
    """, """\
        import trl
        from compat.trl import DDPOTrainer as T
        from compat.trl import DDPOStableDiffusionPipeline
        from compat.trl import PerPromptStatTracker
        import compat.trl

        class Pipe(DDPOStableDiffusionPipeline):
            pass

        T(compat.trl.DDPOConfig(sample_num_steps=10), r, p, Pipe())
        tracker = PerPromptStatTracker(16, 16)
    """)


def test_already_migrated_is_left_alone():
    noop(RULE, """\
        from compat.trl import AlignPropTrainer, DDPOTrainer
        AlignPropTrainer(cfg, r, p, pipe)
    """)


def test_iterative_sft_stays_marked():
    out, findings = run(RULE, """\
        from trl import DDPOTrainer
        from trl.trainer.iterative_sft_trainer import IterativeSFTTrainer
        it = IterativeSFTTrainer(model, tokenizer=tok)
    """)
    assert "from compat.trl import DDPOTrainer" in out
    assert "# TODO(trl-compat): IterativeSFTTrainer was removed" in out
    assert any(f.message.startswith("IterativeSFTTrainer was removed in TRL 0.24") and f.severity == "manual"
               for f in findings)


def test_noops():
    noop(RULE, """\
        from trl import SFTTrainer

        class DDPOTrainer:
            pass

        DDPOTrainer()
        SFTTrainer(model)
    """)
    noop(RULE, """\
        from my_project.diffusion import DDPOTrainer, aesthetic_scorer
        DDPOTrainer(cfg, aesthetic_scorer("a", "b"), p, pipe)
    """)
    noop(RULE, """\
        import trl

        def build(trl):
            return trl.DDPOTrainer(cfg)
    """)
    noop(RULE, """\
        from .auxiliary_modules import aesthetic_scorer
        aesthetic_scorer("a", "b")
    """)
