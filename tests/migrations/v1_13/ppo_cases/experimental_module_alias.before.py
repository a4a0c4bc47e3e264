import trl.core
import trl.experimental.ppo as ppo

config = ppo.PPOConfig(output_dir="o", per_device_train_batch_size=4)
trainer = ppo.PPOTrainer(args=config, processing_class=tok, model=m, ref_model=None, reward_model=rm,  # noqa: F821
                         value_model=vm, train_dataset=ds)  # noqa: F821
sampler = trl.core.LengthSampler(2, 6)
