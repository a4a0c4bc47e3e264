import trl

config = trl.PPOConfig(output_dir="o", per_device_train_batch_size=2)
trainer = trl.PPOTrainer(args=config, processing_class=tok, model=m, ref_model=ref, reward_model=rm,  # noqa: F821
                         value_model=vm, train_dataset=ds)  # noqa: F821
