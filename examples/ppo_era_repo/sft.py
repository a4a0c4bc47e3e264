# RLHF step 1: supervised fine-tuning on question/answer pairs, loss on the answers only.
#
#   python sft.py
#   accelerate launch sft.py --model_name trl-internal-testing/tiny-random-LlamaForCausalLM --use_peft
#
# Written against trl==0.8.6 (see requirements.txt). What this script exercises, each checked against the 0.8.6 wheel:
#   - trl.SFTTrainer(model, args, data_collator, train_dataset, eval_dataset, tokenizer, ..., peft_config,
#     dataset_text_field, packing, formatting_func, max_seq_length, ..., dataset_num_proc, ..., model_init_kwargs, ...)
#     with args a plain transformers.TrainingArguments (SFTConfig arrived in 0.9) (trl/trainer/sft_trainer.py)
#   - the dataset-shaping keywords on the trainer: dataset_text_field=, max_seq_length=, packing=, dataset_num_proc=
#   - DataCollatorForCompletionOnlyLM and get_kbit_device_map through utils.py
#   - peft 0.10 LoraConfig passed as peft_config=
from dataclasses import dataclass, field
from typing import Optional

from datasets import load_dataset
from peft import LoraConfig
from transformers import HfArgumentParser, TrainingArguments

from trl import SFTTrainer
from utils import completion_only_collator, format_qa, load_causal_lm


@dataclass
class ScriptArguments:
    model_name: Optional[str] = field(default="gpt2", metadata={"help": "the model to fine-tune"})
    dataset_name: Optional[str] = field(default="openai/gsm8k")
    max_seq_length: Optional[int] = field(default=512)
    use_peft: Optional[bool] = field(default=False)
    load_in_4bit: Optional[bool] = field(default=False)
    output_dir: Optional[str] = field(default="checkpoints/sft")


script_args = HfArgumentParser(ScriptArguments).parse_args_into_dataclasses()[0]

model, tokenizer = load_causal_lm(script_args.model_name, load_in_4bit=script_args.load_in_4bit)

train_dataset = load_dataset(script_args.dataset_name, "main", split="train").map(format_qa)

peft_config = None
if script_args.use_peft:
    peft_config = LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05, bias="none", task_type="CAUSAL_LM")

training_args = TrainingArguments(
    output_dir=script_args.output_dir,
    per_device_train_batch_size=4,
    gradient_accumulation_steps=2,
    learning_rate=2e-5,
    max_steps=500,
    logging_steps=10,
    save_steps=250,
    report_to="none",
    gradient_checkpointing=False,
)

trainer = SFTTrainer(
    model,
    args=training_args,
    tokenizer=tokenizer,
    train_dataset=train_dataset,
    dataset_text_field="text",
    max_seq_length=script_args.max_seq_length,
    packing=False,
    data_collator=completion_only_collator(tokenizer),
    peft_config=peft_config,
    dataset_num_proc=1,
)
trainer.train()
trainer.save_model(script_args.output_dir)
