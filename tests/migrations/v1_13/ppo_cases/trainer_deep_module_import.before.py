import trl.trainer.ppo_config
import trl.trainer.ppo_trainer

config = trl.trainer.ppo_config.PPOConfig(output_dir="o", per_device_train_batch_size=4)
trainer = trl.trainer.ppo_trainer.PPOTrainer(args=config, processing_class=tok, model=m, ref_model=None,  # noqa: F821
                                             reward_model=rm, value_model=vm, train_dataset=ds)  # noqa: F821
