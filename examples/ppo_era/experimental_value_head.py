# Value-head PPO setup from trl.experimental.ppo.modeling_value_head (trl 0.27 - 1.12).
# runs-on: trl>=0.27,<1.13
# era: 3 (trl.experimental.ppo, TRL 0.26-1.12)
#
# Era 3: the value-head wrapper imported from its module path (the policy is loaded through it and its inner causal LM
# handed to the trainer), a separate reference model, PPOConfig written in code with GPU-sized settings.
from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer

from trl.experimental.ppo import PPOConfig, PPOTrainer
from trl.experimental.ppo.modeling_value_head import AutoModelForCausalLMWithValueHead

MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"
REWARD = "HuggingFaceTB/SmolLM2-135M-Instruct"

config = PPOConfig(
    output_dir="smollm2-gsm8k-ppo",
    run_name="smollm2-gsm8k-ppo",
    learning_rate=1e-6,
    per_device_train_batch_size=4,
    gradient_accumulation_steps=8,
    num_ppo_epochs=2,
    num_mini_batches=2,
    response_length=128,
    temperature=0.9,
    kl_coef=0.02,
    kl_estimator="k3",
    cliprange=0.1,
    vf_coef=0.2,
    whiten_rewards=True,
    num_train_epochs=1,
    bf16=True,
    gradient_checkpointing=True,
    save_strategy="steps",
    save_steps=200,
    push_to_hub=True,
)

tokenizer = AutoTokenizer.from_pretrained(MODEL, padding_side="left")
tokenizer.pad_token = tokenizer.eos_token

policy = AutoModelForCausalLMWithValueHead.from_pretrained(MODEL)
ref_model = AutoModelForCausalLM.from_pretrained(MODEL)
reward_model = AutoModelForSequenceClassification.from_pretrained(REWARD, num_labels=1)
value_model = AutoModelForSequenceClassification.from_pretrained(REWARD, num_labels=1)

dataset = load_dataset("openai/gsm8k", "main", split="train")


def tokenize(example):
    prompt = f"Question: {example['question']}\nAnswer:"
    return {"input_ids": tokenizer(prompt)["input_ids"]}


train_dataset = dataset.map(tokenize, remove_columns=dataset.column_names)

trainer = PPOTrainer(
    args=config,
    processing_class=tokenizer,
    model=policy.pretrained_model,
    ref_model=ref_model,
    reward_model=reward_model,
    value_model=value_model,
    train_dataset=train_dataset,
)
trainer.train()
trainer.save_model(config.output_dir)
