import torch
from trl import GRPOConfig, GRPOTrainer

# TODO(trl-compat): PPO config fields with no GRPO successor were removed [ppo-to-grpo]
# TODO(trl-compat): beta=0.05 carries PPO's init_kl_coef, but PPO subtracted... [ppo-to-grpo]
# TODO(trl-compat): PPO scored 4 prompts x 1 response per step [ppo-to-grpo]
config = GRPOConfig(
    learning_rate=2e-5,
    beta=0.05,
    seed=0,
    num_iterations=4,
    report_to="none",
    max_grad_norm=0.0,
    gradient_checkpointing=False,
    bf16=False,
    num_train_epochs=1,
    max_completion_length=32,
    temperature=0.8,
    per_device_train_batch_size=2,
    steps_per_generation=2,
    num_generations=2,
)


def reward_fn(prompts, completions, **kwargs):
    """Reward function built by trl-compat from the PPO loop's scoring code."""
    scores = judge(prompts, completions, device=trainer.accelerator.device)  # noqa: F821
    rewards = [torch.tensor(s, dtype=torch.float) for s in scores]
    return [float(r) for r in rewards]


# trl-compat: GRPO and Online DPO read text prompts; rebuild them from the PPO-era input_ids
if "prompt" not in ds.column_names:
    ds = ds.with_format(None).map(
        lambda example: {"prompt": tokenizer.decode(example["input_ids"], skip_special_tokens=True)},
        remove_columns=[c for c in ("input_ids", "attention_mask") if c in ds.column_names],
    )

# TODO(trl-compat): GRPOTrainer takes no ref_model (dropped `ref_model`) [ppo-to-grpo]
trainer = GRPOTrainer(
    model=model,
    reward_funcs=reward_fn,
    args=config,
    train_dataset=ds,
    processing_class=tokenizer,
)  # noqa: F821

# TODO(trl-compat): the PPO step loop was replaced by trainer.train() [ppo-to-grpo]
trainer.train()
print(trainer.accelerator.device)
