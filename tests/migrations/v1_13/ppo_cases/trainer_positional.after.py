from trl import GRPOConfig, GRPOTrainer

# TODO(trl-compat): stop_token_id=2 became generation_kwargs eos_token_id [ppo-to-grpo]
# TODO(trl-compat): beta=0.05 carries PPO's kl_coef, but PPO subtracted kl_coef*KL... [ppo-to-grpo]
args = GRPOConfig(
    output_dir="o",
    per_device_train_batch_size=3,
    generation_kwargs={"eos_token_id": 2},
    learning_rate=5e-5,
    temperature=0.7,
    max_completion_length=53,
    num_iterations=4,
    beta=0.05,
    num_generations=3,
)
# trl-compat: GRPO and Online DPO read text prompts; rebuild them from the PPO-era input_ids
if "prompt" not in ds.column_names:
    ds = ds.with_format(None).map(
        lambda example: {"prompt": tok.decode(example["input_ids"], skip_special_tokens=True)},
        remove_columns=[c for c in ("input_ids", "attention_mask") if c in ds.column_names],
    )

# TODO(trl-compat): GRPOTrainer takes no ref_model (dropped `ref_policy`) [ppo-to-grpo]
# TODO(trl-compat): the value model `vm` is no longer used [ppo-to-grpo]
trainer = GRPOTrainer(
    model=policy,
    reward_funcs=rm,
    args=args,
    train_dataset=ds,
    processing_class=tok,
    reward_processing_classes=tok,
)  # noqa: F821
trainer.train()
