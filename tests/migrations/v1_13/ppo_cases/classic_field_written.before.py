# the script overwrites a PPO-only field after building the config: its reads stay marked
from trl import AutoModelForCausalLMWithValueHead, PPOConfig, PPOTrainer

config = PPOConfig(model_name=base_model_path, batch_size=16, mini_batch_size=4)
if use_local_checkpoint:
    config.model_name = "./checkpoints/sft"
model = AutoModelForCausalLMWithValueHead.from_pretrained(config.model_name)
trainer = PPOTrainer(config, model)
