# TRL 0.7-style gpt2-sentiment: the dataset builder takes the config and reads `config.query_dataset`
from datasets import load_dataset

from trl import GRPOConfig, GRPOTrainer
from transformers import AutoModelForCausalLM


def build_dataset(config, input_min_text_length=2):
    ds = load_dataset(query_dataset, split="train")
    return ds.filter(lambda x: len(x["review"]) > input_min_text_length)


def describe(config):
    # TODO(trl-compat): config.query_dataset: GRPOConfig has no `query_dataset` field [ppo-to-grpo]
    return f"PPO on {config.query_dataset}"


# trl-compat: PPO config values read below (GRPOConfig has no such fields)
query_dataset = args.dataset
# TODO(trl-compat): PPO config fields with no GRPO successor were removed [ppo-to-grpo]
# TODO(trl-compat): learning_rate=1.41e-05 written, old default uncertain (pin trl) [ppo-to-grpo]
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted... [ppo-to-grpo]
# TODO(trl-compat): PPO scored 8 prompts x 1 response per step [ppo-to-grpo]
config = GRPOConfig(
    learning_rate=1.41e-5,
    seed=0,
    num_iterations=4,
    beta=0.2,
    report_to="none",
    max_grad_norm=0.0,
    gradient_checkpointing=False,
    bf16=False,
    per_device_train_batch_size=8,
    num_generations=4,
)
dataset = build_dataset(config)
print(describe(config), describe(other_config))
model = AutoModelForCausalLM.from_pretrained("lvwerra/gpt2-imdb")


def reward_fn(prompts, completions, **kwargs):
    """Reward for each completion (one float each): port the scoring code of the PPO loop here."""
    raise NotImplementedError("trl-compat: port the PPO reward computation into this function")


# trl-compat: GRPO and Online DPO read text prompts; rebuild them from the PPO-era input_ids
if "prompt" not in dataset.column_names:
    dataset = dataset.with_format(None).map(
        lambda example: {"prompt": tok.decode(example["input_ids"], skip_special_tokens=True)},
        remove_columns=[c for c in ("input_ids", "attention_mask") if c in dataset.column_names],
    )

# TODO(trl-compat): write the reward: `reward_fn(prompts, completions, **kwargs)`... [ppo-to-grpo]
ppo_trainer = GRPOTrainer(
    model=model,
    reward_funcs=reward_fn,
    args=config,
    train_dataset=dataset,
    processing_class=tok,
)


def card(config):
    # TODO(trl-compat): config.model_name: GRPOConfig has no `model_name` field [ppo-to-grpo]
    return f"tuned from {config.model_name}"


print(card(other_config))
