from peft import LoraConfig
from trl import AutoModelForCausalLMWithValueHead

lora_config = LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05, bias="none", task_type="CAUSAL_LM")
model = AutoModelForCausalLMWithValueHead.from_pretrained(
    "gpt2",
    peft_config=lora_config,
    load_in_8bit=False,
    summary_dropout_prob=0.1,
)
