from dataclasses import dataclass

from trl import PPOConfig


@dataclass
class MyPPOConfig(PPOConfig):
    reward_scale: float = 1.0
    kl_coef: float = 0.02


config = MyPPOConfig(output_dir="o", reward_scale=2.0, cliprange=0.3, per_device_train_batch_size=2)
