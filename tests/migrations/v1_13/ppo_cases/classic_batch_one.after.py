from trl import GRPOConfig

# TODO(trl-compat): PPO config fields with no GRPO successor were removed: gamma=0.99 [ppo-to-grpo]
# TODO(trl-compat): learning_rate=1.41e-05 written, old default uncertain (pin trl) [ppo-to-grpo]
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted... [ppo-to-grpo]
# TODO(trl-compat): PPO scored 1 prompts x 1 response per step [ppo-to-grpo]
# TODO(trl-compat): steps=10000 (classic: samples, 10000 PPO steps of 1) ->... [ppo-to-grpo]
config = GRPOConfig(
    learning_rate=1.41e-5,
    seed=0,
    num_iterations=4,
    beta=0.2,
    report_to="none",
    max_grad_norm=0.0,
    gradient_checkpointing=False,
    bf16=False,
    per_device_train_batch_size=1,
    steps_per_generation=2,
    num_generations=2,
    max_steps=80000,
)
