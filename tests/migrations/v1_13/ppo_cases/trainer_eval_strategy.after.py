from trl import GRPOConfig

# TODO(trl-compat): PPO config fields with no GRPO successor were removed [ppo-to-grpo]
# TODO(trl-compat): beta=0.05 carries PPO's kl_coef, but PPO subtracted kl_coef*KL... [ppo-to-grpo]
# TODO(trl-compat): evaluation is on: per_device_eval_batch_size * num_processes... [ppo-to-grpo]
config = GRPOConfig(
    output_dir="o",
    per_device_train_batch_size=6,
    gradient_accumulation_steps=2,
    eval_strategy="steps",
    eval_steps=100,
    learning_rate=5e-5,
    temperature=0.7,
    max_completion_length=53,
    num_iterations=4,
    beta=0.05,
    steps_per_generation=4,
    num_generations=8,
    num_generations_eval=8,
)
