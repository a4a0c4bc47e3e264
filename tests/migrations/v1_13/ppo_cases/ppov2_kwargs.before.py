from trl import PPOv2Config, PPOv2Trainer

config = PPOv2Config(output_dir="out", num_ppo_epochs=2, num_mini_batches=2, response_length=64, kl_coef=0.1,
                     non_eos_penalty=True, penalty_reward_value=-1, sanity_check=False)
trainer = PPOv2Trainer(
    config=config,
    tokenizer=tokenizer,  # noqa: F821
    policy=policy,  # noqa: F821
    ref_policy=ref_policy,  # noqa: F821
    reward_model=reward_model,  # noqa: F821
    value_model=value_model,  # noqa: F821
    train_dataset=train_dataset,  # noqa: F821
    eval_dataset=eval_dataset,  # noqa: F821
)
trainer.train()
trainer.generate_completions()
