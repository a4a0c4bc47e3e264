# RLHF step 2: a reward model (sequence classifier, one logit) on Anthropic HH pairs.
#
#   python reward.py
#
# Written against trl==0.8.6 (see requirements.txt). What this script exercises, each checked against the 0.8.6 wheel:
#   - trl.RewardConfig(TrainingArguments) with its one field max_length (trl/trainer/reward_config.py)
#   - trl.RewardTrainer(model, args, data_collator, train_dataset, eval_dataset, tokenizer, ..., max_length,
#     peft_config) with tokenizer= (trl/trainer/reward_trainer.py), through the utils.MarginRewardTrainer subclass
#   - the pre-tokenised pair columns the 0.8 RewardDataCollatorWithPadding reads: input_ids_chosen,
#     attention_mask_chosen, input_ids_rejected, attention_mask_rejected
from datasets import load_dataset
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from trl import RewardConfig
from utils import MarginRewardTrainer

MODEL_NAME = "gpt2"
MAX_LENGTH = 512

tokenizer = AutoTokenizer.from_pretrained(MODEL_NAME)
tokenizer.pad_token = tokenizer.eos_token
model = AutoModelForSequenceClassification.from_pretrained(MODEL_NAME, num_labels=1)
model.config.pad_token_id = tokenizer.pad_token_id


def tokenize_pair(examples):
    out = {"input_ids_chosen": [], "attention_mask_chosen": [], "input_ids_rejected": [], "attention_mask_rejected": []}
    for chosen, rejected in zip(examples["chosen"], examples["rejected"]):
        c = tokenizer(chosen, truncation=True, max_length=MAX_LENGTH)
        r = tokenizer(rejected, truncation=True, max_length=MAX_LENGTH)
        out["input_ids_chosen"].append(c["input_ids"])
        out["attention_mask_chosen"].append(c["attention_mask"])
        out["input_ids_rejected"].append(r["input_ids"])
        out["attention_mask_rejected"].append(r["attention_mask"])
    return out


raw = load_dataset("Anthropic/hh-rlhf", split="train")
train_dataset = raw.map(tokenize_pair, batched=True, remove_columns=raw.column_names)

reward_args = RewardConfig(
    output_dir="checkpoints/reward",
    max_length=MAX_LENGTH,
    per_device_train_batch_size=4,
    gradient_accumulation_steps=2,
    learning_rate=1.41e-5,
    max_steps=1000,
    logging_steps=10,
    report_to="none",
    remove_unused_columns=False,
)

trainer = MarginRewardTrainer(model=model, args=reward_args, tokenizer=tokenizer, train_dataset=train_dataset)
trainer.train()
trainer.save_model(reward_args.output_dir)
