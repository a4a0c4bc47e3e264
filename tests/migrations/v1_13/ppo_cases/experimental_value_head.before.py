from trl.experimental.ppo import AutoModelForCausalLMWithValueHead, PPOConfig
from trl.experimental.ppo.modeling_value_head import ValueHead

config = PPOConfig(output_dir="o")
policy = AutoModelForCausalLMWithValueHead.from_pretrained("Qwen/Qwen3-0.6B", v_head_init_strategy="normal")
head = ValueHead(policy.pretrained_model.config)
