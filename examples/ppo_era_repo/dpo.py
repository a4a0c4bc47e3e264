# RLHF alternative to steps 2+3: DPO on Anthropic HH preference pairs.
#
#   python dpo.py
#   python dpo.py --model_name_or_path checkpoints/sft --beta 0.05
#
# Written against trl==0.8.6 (see requirements.txt). What this script exercises, each checked against the 0.8.6 wheel:
#   - trl.DPOTrainer(model, ref_model, beta, label_smoothing, loss_type, args, data_collator, ..., train_dataset,
#     eval_dataset, tokenizer, ..., max_length, max_prompt_length, max_target_length, peft_config, ...)
#     with args a plain transformers.TrainingArguments (DPOConfig arrived in 0.9) (trl/trainer/dpo_trainer.py)
#   - the loss keywords on the trainer: beta=, loss_type="sigmoid", and the length keywords max_length=,
#     max_prompt_length=, plus an explicit ref_model
#   - TrainingArguments(remove_unused_columns=False), which the 0.8 DPO data collator needs
from dataclasses import dataclass, field
from typing import Optional

from datasets import load_dataset
from transformers import AutoModelForCausalLM, HfArgumentParser, TrainingArguments

from trl import DPOTrainer
from utils import load_causal_lm, split_hh_prompt


@dataclass
class ScriptArguments:
    model_name_or_path: Optional[str] = field(default="gpt2")
    beta: Optional[float] = field(default=0.1, metadata={"help": "the beta parameter for DPO loss"})
    max_length: Optional[int] = field(default=512)
    max_prompt_length: Optional[int] = field(default=128)
    output_dir: Optional[str] = field(default="checkpoints/dpo")


script_args = HfArgumentParser(ScriptArguments).parse_args_into_dataclasses()[0]

model, tokenizer = load_causal_lm(script_args.model_name_or_path)
ref_model = AutoModelForCausalLM.from_pretrained(script_args.model_name_or_path)

hh = load_dataset("Anthropic/hh-rlhf")
train_dataset = hh["train"].map(split_hh_prompt)
eval_dataset = hh["test"].map(split_hh_prompt)

training_args = TrainingArguments(
    output_dir=script_args.output_dir,
    per_device_train_batch_size=2,
    per_device_eval_batch_size=2,
    gradient_accumulation_steps=4,
    learning_rate=5e-7,
    max_steps=1000,
    logging_steps=10,
    save_steps=500,
    report_to="none",
    remove_unused_columns=False,
)

dpo_trainer = DPOTrainer(
    model,
    ref_model,
    args=training_args,
    beta=script_args.beta,
    loss_type="sigmoid",
    train_dataset=train_dataset,
    eval_dataset=eval_dataset,
    tokenizer=tokenizer,
    max_length=script_args.max_length,
    max_prompt_length=script_args.max_prompt_length,
)
dpo_trainer.train()
dpo_trainer.save_model(script_args.output_dir)
