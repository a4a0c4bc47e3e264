# Vicuna-LoRA-RLHF style: the value-head wrapper's 8-bit flag is printed after loading
from peft import LoraConfig

from trl import AutoModelForCausalLMWithValueHead, PPOConfig, PPOTrainer

config = PPOConfig(model_name="lmsys/vicuna-7b", batch_size=8, mini_batch_size=4, learning_rate=1.4e-5)
lora_config = LoraConfig(r=8, lora_alpha=16, task_type="CAUSAL_LM")
model = AutoModelForCausalLMWithValueHead.from_pretrained(config.model_name, load_in_8bit=True, peft_config=lora_config)
print("finetune model's is_loaded_in_8bit: ", model.is_loaded_in_8bit, model.is_loaded_in_4bit)
ppo_trainer = PPOTrainer(config, model, ref_model=None, tokenizer=None)
