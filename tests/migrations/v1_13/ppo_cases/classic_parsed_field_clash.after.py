# TRL 0.8-style examples/scripts/ppo.py: ScriptArguments parsed next to the PPO config by one HfArgumentParser
from dataclasses import dataclass, field
from typing import Optional

from datasets import load_dataset
from transformers import AutoTokenizer, HfArgumentParser

from trl import GRPOConfig, GRPOTrainer
from transformers import set_seed
from transformers import AutoModelForCausalLM


@dataclass
class ScriptArguments:
    use_seq2seq: bool = field(default=False, metadata={"help": "whether to use seq2seq"})
    # TODO(trl-compat): ScriptArguments.seed clashes with GRPOConfig.seed (one parser: argparse conflict); not merged (its type or default differs): drop it and read ppo_config.seed, or rename the flag (see MIGRATION.md#ppo-config-sources)
    seed: Optional[int] = field(default=0, metadata={"help": "the seed"})


# TODO(trl-compat): the config is parsed from the command line / a file as GRPOConfig: PPO flags are renamed (--kl_coef -> --beta, --cliprange -> --epsilon, --num_ppo_epochs -> --num_iterations, --response_length -> --max_completion_length, --exp_name -> --run_name) or gone (--vf_coef, --gamma, --lam, --cliprange_value, --whiten_rewards, --total_episodes, ...; PPO fields the script reads moved to its own argument dataclass); GRPO needs --num_generations >= 2 dividing the generation batch (see MIGRATION.md#ppo-config-sources)
parser = HfArgumentParser((ScriptArguments, GRPOConfig))
args, ppo_config = parser.parse_args_into_dataclasses()

set_seed(args.seed)
dataset = load_dataset("stanfordnlp/imdb", split="train")
model = AutoModelForCausalLM.from_pretrained("gpt2", trust_remote_code=ppo_config.trust_remote_code)
tokenizer = AutoTokenizer.from_pretrained("gpt2", trust_remote_code=ppo_config.trust_remote_code)


def reward_fn(prompts, completions, **kwargs):
    """Reward for each completion (one float each): port the scoring code of the PPO loop here."""
    raise NotImplementedError("trl-compat: port the PPO reward computation into this function")


# trl-compat: GRPO and Online DPO read text prompts; rebuild them from the PPO-era input_ids
if "prompt" not in dataset.column_names:
    dataset = dataset.with_format(None).map(
        lambda example: {"prompt": tokenizer.decode(example["input_ids"], skip_special_tokens=True)},
        remove_columns=[c for c in ("input_ids", "attention_mask") if c in dataset.column_names],
    )

# TODO(trl-compat): write the reward: `reward_fn(prompts, completions, **kwargs)` must return one float per completion (it replaces the scores passed to ppo_trainer.step) (see MIGRATION.md#ppo-reward-function)
ppo_trainer = GRPOTrainer(
    model=model,
    reward_funcs=reward_fn,
    args=ppo_config,
    train_dataset=dataset,
    processing_class=tokenizer,
)
