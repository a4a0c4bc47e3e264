# TRL 0.8-style examples/scripts/ppo.py: ScriptArguments parsed next to the PPO config by one HfArgumentParser
from dataclasses import dataclass, field
from typing import Optional

from datasets import load_dataset
from transformers import AutoTokenizer, HfArgumentParser

from trl import AutoModelForCausalLMWithValueHead, PPOConfig, PPOTrainer, set_seed


@dataclass
class ScriptArguments:
    use_seq2seq: bool = field(default=False, metadata={"help": "whether to use seq2seq"})
    trust_remote_code: bool = field(default=False, metadata={"help": "Enable `trust_remote_code`"})
    seed: Optional[int] = field(default=0, metadata={"help": "the seed"})


parser = HfArgumentParser((ScriptArguments, PPOConfig))
args, ppo_config = parser.parse_args_into_dataclasses()

set_seed(args.seed)
dataset = load_dataset("stanfordnlp/imdb", split="train")
model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2", trust_remote_code=args.trust_remote_code)
tokenizer = AutoTokenizer.from_pretrained("gpt2", trust_remote_code=args.trust_remote_code)
ppo_trainer = PPOTrainer(ppo_config, model, None, tokenizer, dataset=dataset)
