"""End to end: an RLOO v1 script (TRL 0.11-0.21 style) migrated by every 1.16 rule, then trained on TRL 1.16.

The script is written the way TRL's own `examples/scripts/rloo/rloo.py` and user code were (`config=`, `tokenizer=`,
`policy=`, `ref_policy=`, `reward_model=`, PPO-era `RLOOConfig` fields). The migrated text must parse, carry exactly
the markers `rloo-v1-to-rloo` promises, and run 2 optimizer steps (2 prompts, 2 completions each, one epoch) on the
installed TRL with tiny random models built in-process (`compat.tiny`). The dataset is given in the shape TRL 1.16 expects (a `prompt` column): data formats are
not code and are out of the migrator's reach (the marker at `train_dataset=` says so).
"""

from __future__ import annotations

import pytest
from packaging.version import Version

import migrations
from compat.migrate.engine import migrate_source
from migrations.base import Options

pytestmark = pytest.mark.slow

RLOO_V1 = """\
from trl import RLOOConfig, RLOOTrainer

config = RLOOConfig(
    output_dir=OUT,
    per_device_train_batch_size=2,
    gradient_accumulation_steps=1,
    rloo_k=2,
    num_ppo_epochs=1,
    num_mini_batches=1,
    total_episodes=2,
    num_train_epochs=1,
    response_length=8,
    kl_coef=0.05,
    missing_eos_penalty=1.0,
    report_to=[],
)
trainer = RLOOTrainer(
    config=config,
    tokenizer=tokenizer,
    policy=policy,
    ref_policy=ref_policy,
    reward_model=reward_model,
    train_dataset=train_dataset,
)
trainer.train()
"""


def test_rloo_v1_script_trains_on_trl_116(tmp_path):
    from datasets import Dataset

    from compat.tiny import tiny_model, tiny_tokenizer

    # a repository pinned to a v1 release (as TRL's own examples were): its defaults are the ones written out
    (tmp_path / "requirements.txt").write_text("torch==2.5.1\ntransformers==4.46.3\ntrl==0.14.0\n", encoding="utf-8")
    (tmp_path / ".git").mkdir()
    options = Options(target_trl=Version("1.16.0"))
    result = migrate_source(RLOO_V1, options=options, rules=list(migrations.select(options)),
                            path=str(tmp_path / "train.py"), verify_idempotent=True)
    assert result.ok, result.errors
    code = result.text
    assert "RLOOTrainer(\n    args=config,\n    processing_class=tokenizer,\n    model=policy," in code
    assert "reward_funcs=reward_model" in code and "ref_policy" not in code.split("trainer = ")[1]
    assert "num_generations=2" in code and "max_completion_length=8" in code and "temperature=0.7" in code
    assert "bf16=False" in code and "gradient_checkpointing=False" in code
    manual = sorted(f.message.split(":")[0] for f in result.findings if f.severity == "manual")
    assert manual == ["batch sizes count completions now (v1", "kl_coef= -> beta=",
                      "num_mini_batches= -> steps_per_generation=", "ref_policy= dropped",
                      "removed RLOO v1 fields", "train_dataset="], manual

    from transformers import AutoModelForCausalLM

    tok = tiny_tokenizer()
    # saved and loaded like v1's `sft_model_path`: RLOO 1.16 reloads the reference from the policy's path
    tiny_model(vocab_size=len(tok)).save_pretrained(tmp_path / "sft")
    policy = AutoModelForCausalLM.from_pretrained(tmp_path / "sft")
    reward_model = tiny_model("sequence-classification", vocab_size=len(tok), num_labels=1,
                              pad_token_id=tok.pad_token_id, seed=2)
    namespace = {"OUT": str(tmp_path / "out"), "tokenizer": tok, "policy": policy,
                 "ref_policy": tiny_model(vocab_size=len(tok), seed=1), "reward_model": reward_model,
                 "train_dataset": Dataset.from_dict({"prompt": ["hello there", "the cat sat"]})}
    exec(compile(code, "train.py", "exec"), namespace)  # noqa: S102 - the migrated test script
    assert namespace["trainer"].state.global_step == 2
