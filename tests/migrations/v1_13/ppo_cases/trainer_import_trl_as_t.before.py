import trl as t

config = t.PPOConfig(output_dir="o", kl_coef=0.1)
trainer = t.PPOTrainer(args=config, processing_class=tok, model=m, ref_model=ref, reward_model=rm,  # noqa: F821
                       value_model=vm, train_dataset=ds)  # noqa: F821
trainer.train()
