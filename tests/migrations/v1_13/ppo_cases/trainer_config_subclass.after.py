from dataclasses import dataclass

from trl import GRPOConfig


# TODO(trl-compat): MyPPOConfig redeclares PPO-only fields ['kl_coef'] [ppo-to-grpo]
@dataclass
class MyPPOConfig(GRPOConfig):
    reward_scale: float = 1.0
    kl_coef: float = 0.02


# TODO(trl-compat): beta=0.05 carries PPO's kl_coef, but PPO subtracted kl_coef*KL... [ppo-to-grpo]
config = MyPPOConfig(
    output_dir="o",
    reward_scale=2.0,
    epsilon=0.3,
    per_device_train_batch_size=2,
    learning_rate=5e-5,
    temperature=0.7,
    max_completion_length=53,
    num_iterations=4,
    beta=0.05,
    num_generations=2,
)
