# PPO with LoRA on the descriptiveness task (trl 0.13 - 0.28: PPOTrainer(args=..., processing_class=..., ...)).
# runs-on: trl>=0.18,<0.29
# era: 2 (Trainer-style PPOTrainer, TRL 0.12-0.28)
#
# Era 2, the renamed keywords: args/processing_class/model/ref_model/reward_model/value_model/train_dataset/
# peft_config; prompts tokenized to input_ids by the usual prepare_dataset map.
from datasets import load_dataset
from peft import LoraConfig
from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer

from trl import PPOConfig, PPOTrainer

SFT_MODEL = "EleutherAI/pythia-160m"
REWARD_MODEL = "EleutherAI/pythia-160m"

training_args = PPOConfig(
    output_dir="pythia-160m-descriptiveness-ppo",
    learning_rate=3e-6,
    per_device_train_batch_size=8,
    gradient_accumulation_steps=2,
    num_ppo_epochs=4,
    num_mini_batches=1,
    total_episodes=10000,
    response_length=53,
    temperature=0.7,
    kl_coef=0.05,
    cliprange=0.2,
    vf_coef=0.1,
    cliprange_value=0.2,
    gamma=1.0,
    lam=0.95,
    whiten_rewards=False,
    missing_eos_penalty=1.0,
    stop_token="eos",
    seed=7,
    logging_steps=10,
    report_to="tensorboard",
)

peft_config = LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05, task_type="CAUSAL_LM")

tokenizer = AutoTokenizer.from_pretrained(SFT_MODEL, padding_side="left")
tokenizer.add_special_tokens({"pad_token": "[PAD]"})

policy = AutoModelForCausalLM.from_pretrained(SFT_MODEL)
value_model = AutoModelForSequenceClassification.from_pretrained(REWARD_MODEL, num_labels=1)
reward_model = AutoModelForSequenceClassification.from_pretrained(REWARD_MODEL, num_labels=1)

dataset = load_dataset("trl-internal-testing/descriptiveness-sentiment-trl-style", split="descriptiveness")
eval_samples = 100
train_dataset = dataset.select(range(len(dataset) - eval_samples))
eval_dataset = dataset.select(range(len(dataset) - eval_samples, len(dataset)))
dataset_text_field = "prompt"


def prepare_dataset(dataset, tokenizer):
    """pre-tokenize the dataset before training; only collate during training"""

    def tokenize(element):
        outputs = tokenizer(element[dataset_text_field], padding=False)
        return {"input_ids": outputs["input_ids"]}

    return dataset.map(tokenize, batched=True, remove_columns=dataset.column_names)


train_dataset = prepare_dataset(train_dataset, tokenizer)
eval_dataset = prepare_dataset(eval_dataset, tokenizer)

trainer = PPOTrainer(
    args=training_args,
    processing_class=tokenizer,
    model=policy,
    ref_model=None,
    reward_model=reward_model,
    value_model=value_model,
    train_dataset=train_dataset,
    eval_dataset=eval_dataset,
    peft_config=peft_config,
)
trainer.train()
trainer.save_model(training_args.output_dir)
trainer.generate_completions()
