# stack-llama style: the PPO config carries the model name, the script reads it back later
from dataclasses import dataclass, field
from typing import Optional

from transformers import AutoTokenizer, HfArgumentParser, AutoModelForCausalLM

from trl import GRPOConfig, GRPOTrainer


@dataclass
class ScriptArguments:
    model_name: Optional[str] = field(default="huggyllama/llama-7b", metadata={"help": "the model name"})
    log_with: Optional[str] = field(default=None, metadata={"help": "use 'wandb' to log with wandb"})
    learning_rate: Optional[float] = field(default=1.41e-5)
    batch_size: Optional[int] = field(default=8)
    mini_batch_size: Optional[int] = field(default=4)


parser = HfArgumentParser(ScriptArguments)
script_args: ScriptArguments = parser.parse_args_into_dataclasses()[0]

# trl-compat: PPO config values read below (GRPOConfig has no such fields)
model_name = script_args.model_name
log_with = script_args.log_with
# TODO(trl-compat): PPO config fields with no GRPO successor were removed [ppo-to-grpo]
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted... [ppo-to-grpo]
# TODO(trl-compat): PPO batch_size=script_args.batch_size prompts per step [ppo-to-grpo]
config = GRPOConfig(
    learning_rate=script_args.learning_rate,
    report_to=script_args.log_with or "none",
    seed=0,
    num_iterations=4,
    beta=0.2,
    max_grad_norm=0.0,
    gradient_checkpointing=False,
    bf16=False,
    per_device_train_batch_size=script_args.mini_batch_size,
)


def load_tokenizer():
    return AutoTokenizer.from_pretrained(model_name)


tokenizer = load_tokenizer()
model = AutoModelForCausalLM.from_pretrained(model_name, load_in_8bit=True)
print("finetune model: ", model_name, "logging to", log_with, "project", "stack-llama")
# TODO(trl-compat): config.reward_model: GRPOConfig has no `reward_model` field [ppo-to-grpo]
print("reward model of the run:", config.reward_model)


def reward_fn(prompts, completions, **kwargs):
    """Reward for each completion (one float each): port the scoring code of the PPO loop here."""
    raise NotImplementedError("trl-compat: port the PPO reward computation into this function")


# TODO(trl-compat): write the reward: `reward_fn(prompts, completions, **kwargs)`... [ppo-to-grpo]
# TODO(trl-compat): GRPOTrainer needs a train_dataset with a `prompt` column [ppo-to-grpo]
ppo_trainer = GRPOTrainer(model=model, reward_funcs=reward_fn, args=config, processing_class=tokenizer)
