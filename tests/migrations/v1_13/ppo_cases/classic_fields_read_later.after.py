# stack-llama style: the PPO config carries the model name, the script reads it back later
from dataclasses import dataclass, field
from typing import Optional

from transformers import AutoTokenizer, HfArgumentParser

from trl import GRPOConfig, GRPOTrainer
from transformers import AutoModelForCausalLM


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
# TODO(trl-compat): PPO config fields with no GRPO successor were removed: model_name=script_args.model_name (tracking only; the model is the trainer's `model`); tracker_project_name="stack-llama" (set WANDB_PROJECT / run_name instead) (see MIGRATION.md#ppo-config-fields)
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted kl_coef*KL from the reward per token (classic: adaptive controller) while GRPO adds beta*KL(k3) to the loss; with beta != 0 and no PEFT, GRPO reloads the reference model from model.config._name_or_path (no ref_model argument). Tune beta (GRPO default 0.0 = no reference model) (see MIGRATION.md#ppo-kl-beta)
# TODO(trl-compat): PPO batch_size=script_args.batch_size prompts per step (one response each) is not static: GRPO needs num_generations >= 2 completions per prompt and num_generations must divide per_device_train_batch_size * num_processes * steps_per_generation; set num_generations / steps_per_generation (see MIGRATION.md#ppo-batch-size)
config = GRPOConfig(
    learning_rate=script_args.learning_rate,
    report_to=script_args.log_with,
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
# TODO(trl-compat): config.reward_model: GRPOConfig has no `reward_model` field: its default differs across the TRL releases this file could run on (None in 0.7.2..0.7.10; 'sentiment-analysis:lvwerra/distilbert-imdb' in 0.7.11..0.11.4): pin trl (see MIGRATION.md#ppo-config-fields)
print("reward model of the run:", config.reward_model)


def reward_fn(prompts, completions, **kwargs):
    """Reward for each completion (one float each): port the scoring code of the PPO loop here."""
    raise NotImplementedError("trl-compat: port the PPO reward computation into this function")


# TODO(trl-compat): write the reward: `reward_fn(prompts, completions, **kwargs)` must return one float per completion (it replaces the scores passed to ppo_trainer.step) (see MIGRATION.md#ppo-reward-function)
# TODO(trl-compat): GRPOTrainer needs a train_dataset with a `prompt` column (see MIGRATION.md#ppo-dataset-prompt)
ppo_trainer = GRPOTrainer(model=model, reward_funcs=reward_fn, args=config, processing_class=tokenizer)
