from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM

lora_config = LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05, bias="none", task_type="CAUSAL_LM")
model = get_peft_model(AutoModelForCausalLM.from_pretrained(
    "gpt2",
    load_in_8bit=False,
), lora_config)
