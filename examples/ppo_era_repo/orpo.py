# ORPO: SFT and preference alignment in one pass, ChatML-formatted.
#
#   python orpo.py
#
# Written against trl==0.8.6 (see requirements.txt). What this script exercises, each checked against the 0.8.6 wheel:
#   - trl.ORPOConfig(TrainingArguments) fields max_length, max_prompt_length, max_completion_length, beta,
#     disable_dropout, truncation_mode, dataset_num_proc (trl/trainer/orpo_config.py)
#   - trl.ORPOTrainer(model, args, data_collator, train_dataset, eval_dataset, tokenizer, ..., peft_config, ...)
#     with tokenizer= (trl/trainer/orpo_trainer.py)
#   - setup_chat_format (through utils.load_causal_lm(chat_format=True)) and tokenizer.apply_chat_template
from datasets import load_dataset

from trl import ORPOConfig, ORPOTrainer
from utils import load_causal_lm, split_hh_prompt

MODEL_NAME = "trl-internal-testing/tiny-random-LlamaForCausalLM"

model, tokenizer = load_causal_lm(MODEL_NAME, chat_format=True)


def to_chatml(example):
    pair = split_hh_prompt(example)
    prompt = [{"role": "user", "content": pair["prompt"].replace("\n\nHuman:", "").strip()}]
    return {
        "prompt": tokenizer.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True),
        "chosen": pair["chosen"].strip() + tokenizer.eos_token,
        "rejected": pair["rejected"].strip() + tokenizer.eos_token,
    }


dataset = load_dataset("Anthropic/hh-rlhf", split="train").map(to_chatml)

orpo_args = ORPOConfig(
    output_dir="checkpoints/orpo",
    beta=0.1,
    max_length=512,
    max_prompt_length=256,
    max_completion_length=256,
    per_device_train_batch_size=2,
    gradient_accumulation_steps=4,
    learning_rate=8e-6,
    max_steps=1000,
    logging_steps=10,
    report_to="none",
    remove_unused_columns=False,
    dataset_num_proc=1,
)

trainer = ORPOTrainer(model, args=orpo_args, train_dataset=dataset, tokenizer=tokenizer)
trainer.train()
trainer.save_model(orpo_args.output_dir)
