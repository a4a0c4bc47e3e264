from dataclasses import dataclass, field
from typing import Optional

from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, HfArgumentParser
from trl import PPOConfig, PPOTrainer


@dataclass
class ScriptArguments:
    dataset_name: str = field(default="trl-internal-testing/descriptiveness-sentiment-trl-style")
    max_prompts: Optional[int] = None


parser = HfArgumentParser((ScriptArguments, PPOConfig))
script_args, training_args = parser.parse_args_into_dataclasses()
tokenizer = AutoTokenizer.from_pretrained(training_args.sft_model_path, padding_side="left")
dataset = load_dataset(script_args.dataset_name, split="train")
dataset = dataset.map(lambda x: {"prompt": x["prompt"]}, num_proc=training_args.dataset_num_proc)
if training_args.total_episodes is not None:
    dataset = dataset.select(range(training_args.total_episodes))
policy = AutoModelForCausalLM.from_pretrained(training_args.sft_model_path)
trainer = PPOTrainer(args=training_args, processing_class=tokenizer, model=policy, ref_model=None,
                     reward_model=policy, value_model=policy, train_dataset=dataset)
trainer.train()
