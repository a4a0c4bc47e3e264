from trl import GRPOConfig


def build(PPOConfig=dict):
    return PPOConfig(batch_size=4)


# TODO(trl-compat): beta=0.05 carries PPO's kl_coef, but PPO subtracted kl_coef*KL... [ppo-to-grpo]
default = GRPOConfig(
    output_dir="o",
    learning_rate=5e-5,
    temperature=0.7,
    max_completion_length=53,
    num_iterations=4,
    beta=0.05,
    num_generations=4,
)
