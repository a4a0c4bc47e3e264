import trl
from trl.experimental.online_dpo import OnlineDPOConfig, OnlineDPOTrainer

config = OnlineDPOConfig(
    output_dir="o",
    per_device_train_batch_size=2,
    learning_rate=5e-5,
    temperature=0.7,
    max_new_tokens=53,
)
# trl-compat: GRPO and Online DPO read text prompts; rebuild them from the PPO-era input_ids
if "prompt" not in ds.column_names:
    ds = ds.with_format(None).map(
        lambda example: {"prompt": tok.decode(example["input_ids"], skip_special_tokens=True)},
        remove_columns=[c for c in ("input_ids", "attention_mask") if c in ds.column_names],
    )

# TODO(trl-compat): the value model `vm` is no longer used (Online DPO has no critic) [ppo-to-grpo]
trainer = OnlineDPOTrainer(
    model=m,
    ref_model=ref,
    reward_funcs=rm,  # noqa: F821
    args=config,
    train_dataset=ds,
    processing_class=tok,
    reward_processing_classes=tok,
)  # noqa: F821
