# stack-llama style: the PPO config carries the model name, the script reads it back later
from dataclasses import dataclass, field
from typing import Optional

from transformers import AutoTokenizer, HfArgumentParser

from trl import AutoModelForCausalLMWithValueHead, PPOConfig, PPOTrainer


@dataclass
class ScriptArguments:
    model_name: Optional[str] = field(default="huggyllama/llama-7b", metadata={"help": "the model name"})
    log_with: Optional[str] = field(default=None, metadata={"help": "use 'wandb' to log with wandb"})
    learning_rate: Optional[float] = field(default=1.41e-5)
    batch_size: Optional[int] = field(default=8)
    mini_batch_size: Optional[int] = field(default=4)


parser = HfArgumentParser(ScriptArguments)
script_args: ScriptArguments = parser.parse_args_into_dataclasses()[0]

config = PPOConfig(
    model_name=script_args.model_name,
    learning_rate=script_args.learning_rate,
    log_with=script_args.log_with,
    batch_size=script_args.batch_size,
    mini_batch_size=script_args.mini_batch_size,
    tracker_project_name="stack-llama",
)


def load_tokenizer():
    return AutoTokenizer.from_pretrained(config.model_name)


tokenizer = load_tokenizer()
model = AutoModelForCausalLMWithValueHead.from_pretrained(config.model_name, load_in_8bit=True)
print("finetune model: ", config.model_name, "logging to", config.log_with, "project", config.tracker_project_name)
print("reward model of the run:", config.reward_model)
ppo_trainer = PPOTrainer(config, model, tokenizer=tokenizer)
