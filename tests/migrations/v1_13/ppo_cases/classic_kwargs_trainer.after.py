from trl import GRPOConfig, GRPOTrainer
from transformers import AutoModelForCausalLM

# TODO(trl-compat): PPO config fields with no GRPO successor were removed: optimize_cuda_cache=True (closest: torch_empty_cache_steps); early_stopping=True (no successor); target_kl=0.1 (no successor); adap_kl_ctrl=True (adaptive KL control has no successor (beta is fixed)); tracker_project_name="trl" (set WANDB_PROJECT / run_name instead) (see MIGRATION.md#ppo-config-fields)
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted kl_coef*KL from the reward per token (classic: adaptive controller) while GRPO adds beta*KL(k3) to the loss; with beta != 0 and no PEFT, GRPO reloads the reference model from model.config._name_or_path (no ref_model argument). Tune beta (GRPO default 0.0 = no reference model) (see MIGRATION.md#ppo-kl-beta)
# TODO(trl-compat): PPO scored 32 prompts x 1 response per step; GRPO now samples 4 prompt(s) x 8 completions per generation batch of 32 (num_generations must divide it). Adjust num_generations / steps_per_generation if you want more prompts per step (see MIGRATION.md#ppo-batch-size)
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

# TODO(trl-compat): write the reward: `reward_fn(prompts, completions, **kwargs)` must return one float per completion (it replaces the scores passed to ppo_trainer.step) (see MIGRATION.md#ppo-reward-function)
# TODO(trl-compat): the PPO data_collator `collator` was dropped: GRPOTrainer batches prompts itself (see MIGRATION.md#ppo-trainer)
ppo_trainer = GRPOTrainer(
    model=model,
    reward_funcs=reward_fn,
    args=ppo_config,
    train_dataset=dataset,  # noqa: F821
    processing_class=tokenizer,  # noqa: F821
)
