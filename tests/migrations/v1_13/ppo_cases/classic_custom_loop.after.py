import torch
from trl import GRPOConfig, GRPOTrainer
from transformers import AutoModelForCausalLM

# TODO(trl-compat): PPO config fields with no GRPO successor were removed: model_name="gpt2" (tracking only; the model is the trainer's `model`) (see MIGRATION.md#ppo-config-fields)
# TODO(trl-compat): learning_rate was not set: its default differs across the TRL releases this file could run on (1e-05 in 0.4.0..0.7.10; 1.41e-05 in 0.7.11..0.11.4): pin trl; 1.41e-05 written (see MIGRATION.md#ppo-config-fields)
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted kl_coef*KL from the reward per token (classic: adaptive controller) while GRPO adds beta*KL(k3) to the loss; with beta != 0 and no PEFT, GRPO reloads the reference model from model.config._name_or_path (no ref_model argument). Tune beta (GRPO default 0.0 = no reference model) (see MIGRATION.md#ppo-kl-beta)
# TODO(trl-compat): PPO scored 4 prompts x 1 response per step; GRPO now samples 2 prompt(s) x 2 completions per generation batch of 4 (num_generations must divide it). Adjust num_generations / steps_per_generation if you want more prompts per step (see MIGRATION.md#ppo-batch-size)
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

# TODO(trl-compat): write the reward: `reward_fn(prompts, completions, **kwargs)` must return one float per completion (it replaces the scores passed to ppo_trainer.step) (see MIGRATION.md#ppo-reward-function)
ppo_trainer = GRPOTrainer(
    model=model,
    reward_funcs=reward_fn,
    args=config,
    train_dataset=dataset,
    processing_class=tokenizer,
)  # noqa: F821

# TODO(trl-compat): ppo_trainer.dataloader does not exist on GRPOTrainer (see MIGRATION.md#ppo-trainer-attributes)
# TODO(trl-compat): this PPO step loop was not converted (the responses are not decoded with tokenizer.decode/batch_decode before scoring): GRPOTrainer has no generate/step/log_stats; move the scoring into `reward_fn(prompts, completions, **kwargs)` and replace the loop with `ppo_trainer.train()` (see MIGRATION.md#ppo-step-loop)
for batch in ppo_trainer.dataloader:
    query_tensors = batch["input_ids"]
    # TODO(trl-compat): ppo_trainer.generate() does not exist on GRPOTrainer: training, generation and logging happen inside trainer.train() (see MIGRATION.md#ppo-trainer-attributes)
    response_tensors = ppo_trainer.generate(query_tensors, return_prompt=False, max_new_tokens=8)
    # reward from token statistics: needs the tensors, not the texts
    rewards = [torch.tensor(float((r == 50256).sum())) - 0.01 * len(q) for q, r in zip(query_tensors, response_tensors)]
    # TODO(trl-compat): ppo_trainer.step() does not exist on GRPOTrainer: training, generation and logging happen inside trainer.train() (see MIGRATION.md#ppo-trainer-attributes)
    stats = ppo_trainer.step(query_tensors, response_tensors, rewards)
