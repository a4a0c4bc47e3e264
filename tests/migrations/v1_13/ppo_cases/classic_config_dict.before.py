from trl import PPOConfig

ppo_kwargs = {
    "model_name": "gpt2",
    "learning_rate": 5e-6,
    "batch_size": 16,
    "mini_batch_size": 4,
    "ppo_epochs": 2,
    "init_kl_coef": 0.1,
    "log_with": "tensorboard",
}
config = PPOConfig(**ppo_kwargs)
