try:
    from trl import PPOConfig, PPOTrainer
except ImportError:  # trl >= 0.29
    from trl.experimental.ppo import PPOConfig, PPOTrainer

config = PPOConfig(output_dir="o", per_device_train_batch_size=4)
trainer = PPOTrainer(args=config, processing_class=tok, model=m, ref_model=None, reward_model=rm,  # noqa: F821
                     value_model=vm, train_dataset=ds)  # noqa: F821
trainer.train()
