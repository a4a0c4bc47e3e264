from trl import GRPOConfig

# TODO(trl-compat): PPO config fields with no GRPO successor were removed [ppo-to-grpo]
# TODO(trl-compat): beta=0.1 carries PPO's init_kl_coef, but PPO subtracted... [ppo-to-grpo]
# TODO(trl-compat): PPO scored 16 prompts x 1 response per step [ppo-to-grpo]
ppo_kwargs = {
    "learning_rate": 5e-6,
    "num_iterations": 2,
    "beta": 0.1,
    "report_to": "tensorboard",
    "seed": 0,
    "max_grad_norm": 0.0,
    "gradient_checkpointing": False,
    "bf16": False,
    "per_device_train_batch_size": 4,
    "steps_per_generation": 4,
    "num_generations": 8,
}
config = GRPOConfig(**ppo_kwargs)
