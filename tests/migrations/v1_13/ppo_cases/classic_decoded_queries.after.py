import torch
from trl import GRPOConfig, GRPOTrainer

# TODO(trl-compat): PPO config fields with no GRPO successor were removed: adap_kl_ctrl=False (adaptive KL control has no successor (beta is fixed)) (see MIGRATION.md#ppo-config-fields)
# TODO(trl-compat): beta=0.05 carries PPO's init_kl_coef, but PPO subtracted kl_coef*KL from the reward per token (classic: adaptive controller) while GRPO adds beta*KL(k3) to the loss; with beta != 0 and no PEFT, GRPO reloads the reference model from model.config._name_or_path (no ref_model argument). Tune beta (GRPO default 0.0 = no reference model) (see MIGRATION.md#ppo-kl-beta)
# TODO(trl-compat): PPO scored 4 prompts x 1 response per step; GRPO now samples 2 prompt(s) x 2 completions per generation batch of 4 (num_generations must divide it). Adjust num_generations / steps_per_generation if you want more prompts per step (see MIGRATION.md#ppo-batch-size)
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

# TODO(trl-compat): GRPOTrainer takes no ref_model (dropped `ref_model`): with beta != 0 and no PEFT it reloads the reference from model.config._name_or_path, so the policy must be loadable from that path; with beta=0.0 there is no reference model at all (see MIGRATION.md#ppo-ref-model)
trainer = GRPOTrainer(
    model=model,
    reward_funcs=reward_fn,
    args=config,
    train_dataset=ds,
    processing_class=tokenizer,
)  # noqa: F821

# TODO(trl-compat): the PPO step loop was replaced by trainer.train(): generation settings moved to the config, the scoring code moved to `reward_fn`; removed: query_tensors = batch["input_ids"]; queries = tokenizer.batch_decode(query_tensors, skip_special_tokens=True)  # ...; response_tensors = trainer.generate(query_tensors, return_prompt=False, max_n...; responses = tokenizer.batch_decode(response_tensors, skip_special_tokens=True...; trainer.step(query_tensors, response_tensors, rewards) (see MIGRATION.md#ppo-step-loop)
trainer.train()
print(trainer.accelerator.device)
