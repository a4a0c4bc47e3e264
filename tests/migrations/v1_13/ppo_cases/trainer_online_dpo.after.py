from trl.experimental.online_dpo import OnlineDPOConfig, OnlineDPOTrainer

# TODO(trl-compat): PPO config fields with no Online DPO successor were removed [ppo-to-grpo]
# TODO(trl-compat): Online DPO's beta is the DPO inverse temperature [ppo-to-grpo]
training_args = OnlineDPOConfig(
    output_dir="o",
    max_new_tokens=40,
    missing_eos_penalty=1.0,
    learning_rate=5e-5,
    temperature=0.7,
)
# trl-compat: GRPO and Online DPO read text prompts; rebuild them from the PPO-era input_ids
if "prompt" not in train_dataset.column_names:
    train_dataset = train_dataset.with_format(None).map(
        lambda example: {"prompt": tokenizer.decode(example["input_ids"], skip_special_tokens=True)},
        remove_columns=[c for c in ("input_ids", "attention_mask") if c in train_dataset.column_names],
    )

# TODO(trl-compat): the value model `value_model` is no longer used [ppo-to-grpo]
trainer = OnlineDPOTrainer(
    model=policy,  # noqa: F821
    ref_model=ref_policy,  # noqa: F821
    reward_funcs=reward_model,  # noqa: F821
    args=training_args,
    train_dataset=train_dataset,  # noqa: F821
    processing_class=tokenizer,  # noqa: F821
    reward_processing_classes=tokenizer,
)
trainer.train()
