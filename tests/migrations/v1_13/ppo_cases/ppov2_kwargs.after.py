from trl import GRPOConfig, GRPOTrainer

# TODO(trl-compat): PPO config fields with no GRPO successor were removed [ppo-to-grpo]
# TODO(trl-compat): learning_rate=5e-05 written, old default uncertain (pin trl) [ppo-to-grpo]
# TODO(trl-compat): beta=0.1 carries PPO's kl_coef, but PPO subtracted kl_coef*KL... [ppo-to-grpo]
config = GRPOConfig(
    output_dir="out",
    num_iterations=2,
    max_completion_length=64,
    beta=0.1,
    learning_rate=5e-5,
    temperature=0.7,
    steps_per_generation=2,
    num_generations=8,
)
# trl-compat: GRPO and Online DPO read text prompts; rebuild them from the PPO-era input_ids
if "prompt" not in train_dataset.column_names:
    train_dataset = train_dataset.with_format(None).map(
        lambda example: {"prompt": tokenizer.decode(example["input_ids"], skip_special_tokens=True)},
        remove_columns=[c for c in ("input_ids", "attention_mask") if c in train_dataset.column_names],
    )


# trl-compat: GRPO and Online DPO read text prompts; rebuild them from the PPO-era input_ids
if "prompt" not in eval_dataset.column_names:
    eval_dataset = eval_dataset.with_format(None).map(
        lambda example: {"prompt": tokenizer.decode(example["input_ids"], skip_special_tokens=True)},
        remove_columns=[c for c in ("input_ids", "attention_mask") if c in eval_dataset.column_names],
    )

# TODO(trl-compat): GRPOTrainer takes no ref_model (dropped `ref_policy`) [ppo-to-grpo]
# TODO(trl-compat): the value model `value_model` is no longer used [ppo-to-grpo]
trainer = GRPOTrainer(
    model=policy,  # noqa: F821
    reward_funcs=reward_model,  # noqa: F821
    args=config,
    train_dataset=train_dataset,  # noqa: F821
    eval_dataset=eval_dataset,  # noqa: F821
    processing_class=tokenizer,  # noqa: F821
    reward_processing_classes=tokenizer,
)
trainer.train()
# TODO(trl-compat): trainer.generate_completions() does not exist on GRPOTrainer [ppo-to-grpo]
