"""Before/after and no-op cases for `removed-ddpo-alignprop-iterative-sft`."""

from __future__ import annotations

from migrations.v0_24.removed_ddpo_alignprop_iterative_sft import MIGRATION as RULE
from tests.migrations._driver import noop, run


def test_marked():
    out, findings = run(RULE, """\
        from trl import DDPOConfig, DDPOTrainer, DefaultDDPOStableDiffusionPipeline
        from trl.trainer.iterative_sft_trainer import IterativeSFTTrainer
        trainer = DDPOTrainer(DDPOConfig(), reward_fn, prompt_fn, DefaultDDPOStableDiffusionPipeline("sd"))
        it = IterativeSFTTrainer(model, tokenizer=tok)
    """)
    assert any("DDPOTrainer removed in TRL 0.24" in f.message for f in findings)
    assert "# TODO(trl-compat): IterativeSFTTrainer was removed" in out
    assert any(f.message.startswith("IterativeSFTTrainer was removed in TRL 0.24") for f in findings)
    assert out.count("from trl import DDPOConfig, DDPOTrainer, DefaultDDPOStableDiffusionPipeline") == 1
    assert all(f.severity == "manual" for f in findings)


def test_noops():
    noop(RULE, """\
        from trl import SFTTrainer

        class DDPOTrainer:
            pass

        DDPOTrainer()
        SFTTrainer(model)
    """)
