from dataclasses import dataclass

from trl import GRPOConfig


# TODO(trl-compat): MyPPOConfig redeclares PPO-only fields ['kl_coef']: GRPOConfig has no such fields (see the field table for successors) (see MIGRATION.md#ppo-subclasses)
@dataclass
class MyPPOConfig(GRPOConfig):
    reward_scale: float = 1.0
    kl_coef: float = 0.02


# TODO(trl-compat): beta=0.05 carries PPO's kl_coef, but PPO subtracted kl_coef*KL from the reward per token (classic: adaptive controller) while GRPO adds beta*KL(k3) to the loss; with beta != 0 and no PEFT, GRPO reloads the reference model from model.config._name_or_path (no ref_model argument). Tune beta (GRPO default 0.0 = no reference model) (see MIGRATION.md#ppo-kl-beta)
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
