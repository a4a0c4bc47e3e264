from transformers import AutoModelForCausalLM
from trl import GRPOConfig
from compat.value_head import ValueHead

# TODO(trl-compat): learning_rate=3e-06 written, old default uncertain (pin trl) [ppo-to-grpo]
# TODO(trl-compat): beta=0.05 carries PPO's kl_coef, but PPO subtracted kl_coef*KL... [ppo-to-grpo]
config = GRPOConfig(
    output_dir="o",
    learning_rate=3e-6,
    temperature=0.7,
    max_completion_length=53,
    num_iterations=4,
    beta=0.05,
    num_generations=4,
)
policy = AutoModelForCausalLM.from_pretrained("Qwen/Qwen3-0.6B")
head = ValueHead(policy.config)
