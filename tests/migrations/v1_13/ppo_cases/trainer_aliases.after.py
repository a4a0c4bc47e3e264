from trl import GRPOConfig as Cfg, GRPOTrainer as RLTrainer

# TODO(trl-compat): beta=0.05 carries PPO's kl_coef, but PPO subtracted kl_coef*KL... [ppo-to-grpo]
cfg = Cfg(
    output_dir="o",
    per_device_train_batch_size=8,
    num_iterations=1,
    learning_rate=5e-5,
    temperature=0.7,
    max_completion_length=53,
    beta=0.05,
    num_generations=4,
)
# trl-compat: GRPO and Online DPO read text prompts; rebuild them from the PPO-era input_ids
if "prompt" not in ds.column_names:
    ds = ds.with_format(None).map(
        lambda example: {"prompt": tok.decode(example["input_ids"], skip_special_tokens=True)},
        remove_columns=[c for c in ("input_ids", "attention_mask") if c in ds.column_names],
    )

# TODO(trl-compat): the value model `vm` is no longer used [ppo-to-grpo]
rl = RLTrainer(
    model=m,
    reward_funcs=rm,
    args=cfg,
    train_dataset=ds,
    processing_class=tok,
    reward_processing_classes=tok,
)  # noqa: F821
rl.train()
