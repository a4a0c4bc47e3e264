from trl import PPOConfig, PPOTrainer

args = PPOConfig(output_dir="o", per_device_train_batch_size=3, num_mini_batches=1, stop_token_id=2)
trainer = PPOTrainer(args, tok, policy, ref_policy, rm, ds, vm)  # noqa: F821
trainer.train()
