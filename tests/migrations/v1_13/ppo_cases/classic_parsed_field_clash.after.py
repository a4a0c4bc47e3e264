# TRL 0.8-style examples/scripts/ppo.py: ScriptArguments parsed next to the PPO config by one HfArgumentParser
from dataclasses import dataclass, field
from typing import Optional

from datasets import load_dataset
from transformers import AutoTokenizer, HfArgumentParser, AutoModelForCausalLM, set_seed

from trl import GRPOConfig, GRPOTrainer


@dataclass
class ScriptArguments:
    use_seq2seq: bool = field(default=False, metadata={"help": "whether to use seq2seq"})
    # TODO(trl-compat): ScriptArguments.seed clashes with GRPOConfig.seed [ppo-to-grpo]
    seed: Optional[int] = field(default=0, metadata={"help": "the seed"})


# TODO(trl-compat): the config is parsed from the command line / a file as GRPOConfig [ppo-to-grpo]
parser = HfArgumentParser((ScriptArguments, GRPOConfig))
args, ppo_config = parser.parse_args_into_dataclasses()

set_seed(args.seed)
dataset = load_dataset("stanfordnlp/imdb", split="train")
model = AutoModelForCausalLM.from_pretrained("gpt2", trust_remote_code=ppo_config.trust_remote_code)
tokenizer = AutoTokenizer.from_pretrained("gpt2", trust_remote_code=ppo_config.trust_remote_code)


def reward_fn(prompts, completions, **kwargs):
    """Reward for each completion (one float each): port the scoring code of the PPO loop here."""
    raise NotImplementedError("trl-compat: port the PPO reward computation into this function")


# TODO(trl-compat): write the reward: `reward_fn(prompts, completions, **kwargs)`... [ppo-to-grpo]
# TODO(trl-compat): GRPOTrainer reads a `prompt` column [ppo-to-grpo]
ppo_trainer = GRPOTrainer(
    model=model,
    reward_funcs=reward_fn,
    args=ppo_config,
    train_dataset=dataset,
    processing_class=tokenizer,
)
