from trl import PPOConfig, PPOTrainer

training_args = PPOConfig(output_dir="o", kl_coef=0.05, response_length=40, missing_eos_penalty=1.0, num_ppo_epochs=2)
trainer = PPOTrainer(
    args=training_args,
    processing_class=tokenizer,  # noqa: F821
    model=policy,  # noqa: F821
    ref_model=ref_policy,  # noqa: F821
    reward_model=reward_model,  # noqa: F821
    value_model=value_model,  # noqa: F821
    train_dataset=train_dataset,  # noqa: F821
)
trainer.train()
