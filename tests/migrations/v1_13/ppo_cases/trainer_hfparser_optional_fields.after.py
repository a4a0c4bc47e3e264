from dataclasses import dataclass, field
from typing import Optional

from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, HfArgumentParser
from trl import GRPOConfig, GRPOTrainer


@dataclass
class ScriptArguments:
    dataset_name: str = field(default="trl-internal-testing/descriptiveness-sentiment-trl-style")
    max_prompts: Optional[int] = None
    # trl-compat: PPOConfig fields the script still reads (no GRPO/Online DPO field)
    sft_model_path: str = "EleutherAI/pythia-160m"
    dataset_num_proc: Optional[int] = None
    total_episodes: Optional[int] = None


# TODO(trl-compat): the config is parsed from the command line / a file as GRPOConfig [ppo-to-grpo]
parser = HfArgumentParser((ScriptArguments, GRPOConfig))
script_args, training_args = parser.parse_args_into_dataclasses()
tokenizer = AutoTokenizer.from_pretrained(script_args.sft_model_path, padding_side="left")
dataset = load_dataset(script_args.dataset_name, split="train")
dataset = dataset.map(lambda x: {"prompt": x["prompt"]}, num_proc=script_args.dataset_num_proc)
if script_args.total_episodes is not None:
    dataset = dataset.select(range(script_args.total_episodes))
policy = AutoModelForCausalLM.from_pretrained(script_args.sft_model_path)
# trl-compat: GRPO and Online DPO read text prompts; rebuild them from the PPO-era input_ids
if "prompt" not in dataset.column_names:
    dataset = dataset.with_format(None).map(
        lambda example: {"prompt": tokenizer.decode(example["input_ids"], skip_special_tokens=True)},
        remove_columns=[c for c in ("input_ids", "attention_mask") if c in dataset.column_names],
    )

# TODO(trl-compat): the value model `policy` is no longer used [ppo-to-grpo]
trainer = GRPOTrainer(
    model=policy,
    reward_funcs=policy,
    args=training_args,
    train_dataset=dataset,
    processing_class=tokenizer,
    reward_processing_classes=tokenizer,
)
trainer.train()
