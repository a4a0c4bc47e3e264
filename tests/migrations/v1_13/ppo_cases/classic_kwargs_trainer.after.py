from trl import GRPOConfig, GRPOTrainer
from transformers import AutoModelForCausalLM

# TODO(trl-compat): PPO config fields with no GRPO successor were removed [ppo-to-grpo]
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted... [ppo-to-grpo]
# TODO(trl-compat): PPO scored 32 prompts x 1 response per step [ppo-to-grpo]
ppo_config = GRPOConfig(
    run_name="my-run",
    learning_rate=1.41e-5,
    num_iterations=4,
    seed=42,
    beta=0.2,
    max_grad_norm=0.0,
    report_to="none",
    gradient_checkpointing=False,
    bf16=False,
    gradient_accumulation_steps=2,
    per_device_train_batch_size=8,
    steps_per_generation=4,
    num_generations=8,
)
model = AutoModelForCausalLM.from_pretrained("gpt2")


def reward_fn(prompts, completions, **kwargs):
    """Reward for each completion (one float each): port the scoring code of the PPO loop here."""
    raise NotImplementedError("trl-compat: port the PPO reward computation into this function")


# trl-compat: GRPO and Online DPO read text prompts; rebuild them from the PPO-era input_ids
if "prompt" not in dataset.column_names:
    dataset = dataset.with_format(None).map(
        lambda example: {"prompt": tokenizer.decode(example["input_ids"], skip_special_tokens=True)},
        remove_columns=[c for c in ("input_ids", "attention_mask") if c in dataset.column_names],
    )

# TODO(trl-compat): write the reward: `reward_fn(prompts, completions, **kwargs)`... [ppo-to-grpo]
# TODO(trl-compat): the PPO data_collator `collator` was dropped [ppo-to-grpo]
ppo_trainer = GRPOTrainer(
    model=model,
    reward_funcs=reward_fn,
    args=ppo_config,
    train_dataset=dataset,  # noqa: F821
    processing_class=tokenizer,  # noqa: F821
)
