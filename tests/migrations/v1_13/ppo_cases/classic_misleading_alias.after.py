# TODO(trl-compat): `HfPPOConfig` names trl's GRPOConfig now: rename it [ppo-to-grpo]
from trl import GRPOConfig as HfPPOConfig
from trl import GRPOTrainer as Trainer

# TODO(trl-compat): learning_rate=1.41e-05 written, old default uncertain (pin trl) [ppo-to-grpo]
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted... [ppo-to-grpo]
# TODO(trl-compat): PPO scored 8 prompts x 1 response per step [ppo-to-grpo]
config = HfPPOConfig(
    learning_rate=1.41e-5,
    seed=0,
    num_iterations=4,
    beta=0.2,
    report_to="none",
    max_grad_norm=0.0,
    gradient_checkpointing=False,
    bf16=False,
    per_device_train_batch_size=8,
    num_generations=4,
)
