from trl import GRPOConfig, GRPOTrainer

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
# TODO(trl-compat): num_shared_layers=2 has no successor [ppo-to-grpo]
ppo_trainer = GRPOTrainer(
    model=model,
    reward_funcs=reward_fn,
    args=config,
    train_dataset=dataset,
    processing_class=tokenizer,
)  # noqa: F821
device = ppo_trainer.accelerator.device
print(8, ppo_trainer.processing_class.eos_token)
ppo_trainer.save_model("ckpt")
# TODO(trl-compat): ppo_trainer.push_to_hub... [ppo-to-grpo]
ppo_trainer.push_to_hub("me/ckpt")
