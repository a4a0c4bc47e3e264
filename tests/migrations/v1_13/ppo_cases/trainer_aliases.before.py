from trl import PPOConfig as Cfg, PPOTrainer as RLTrainer

cfg = Cfg(output_dir="o", per_device_train_batch_size=8, num_ppo_epochs=1)
rl = RLTrainer(args=cfg, processing_class=tok, model=m, ref_model=None, reward_model=rm, value_model=vm,  # noqa: F821
               train_dataset=ds)  # noqa: F821
rl.train()
