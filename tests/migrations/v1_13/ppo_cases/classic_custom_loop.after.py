import torch
from trl import GRPOConfig, GRPOTrainer
from transformers import AutoModelForCausalLM

# TODO(trl-compat): PPO config fields with no GRPO successor were removed [ppo-to-grpo]
# TODO(trl-compat): learning_rate=1.41e-05 written, old default uncertain (pin trl) [ppo-to-grpo]
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted... [ppo-to-grpo]
# TODO(trl-compat): PPO scored 4 prompts x 1 response per step [ppo-to-grpo]
config = GRPOConfig(
    learning_rate=1.41e-5,
    seed=0,
    num_iterations=4,
    beta=0.2,
    report_to="none",
    max_grad_norm=0.0,
    gradient_checkpointing=False,
    bf16=False,
    per_device_train_batch_size=4,
    num_generations=2,
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
ppo_trainer = GRPOTrainer(
    model=model,
    reward_funcs=reward_fn,
    args=config,
    train_dataset=dataset,
    processing_class=tokenizer,
)  # noqa: F821

# TODO(trl-compat): ppo_trainer.dataloader does not exist on GRPOTrainer [ppo-to-grpo]
# TODO(trl-compat): this PPO step loop was not converted [ppo-to-grpo]
for batch in ppo_trainer.dataloader:
    query_tensors = batch["input_ids"]
    # TODO(trl-compat): ppo_trainer.generate() does not exist on GRPOTrainer [ppo-to-grpo]
    response_tensors = ppo_trainer.generate(query_tensors, return_prompt=False, max_new_tokens=8)
    # reward from token statistics: needs the tensors, not the texts
    rewards = [torch.tensor(float((r == 50256).sum())) - 0.01 * len(q) for q, r in zip(query_tensors, response_tensors)]
    # TODO(trl-compat): ppo_trainer.step() does not exist on GRPOTrainer [ppo-to-grpo]
    stats = ppo_trainer.step(query_tensors, response_tensors, rewards)
