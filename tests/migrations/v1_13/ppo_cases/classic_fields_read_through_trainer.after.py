# the model name is read back through the trainer's config (`ppo_trainer.config.model_name`); a config built as a
# class attribute keeps its marker (a binding in a class body is not visible to the reads)
from trl import GRPOConfig, GRPOTrainer
from transformers import AutoModelForCausalLM


class Settings:
    # TODO(trl-compat): PPO config fields with no GRPO successor were removed [ppo-to-grpo]
    # TODO(trl-compat): learning_rate=1.41e-05 written, old default uncertain [ppo-to-grpo]
    # TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted... [ppo-to-grpo]
    # TODO(trl-compat): PPO scored 4 prompts x 1 response per step [ppo-to-grpo]
    ppo = GRPOConfig(
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
    # TODO(trl-compat): ppo.model_name: GRPOConfig has no `model_name` field [ppo-to-grpo]
    label = ppo.model_name


# trl-compat: PPO config values read below (GRPOConfig has no such fields)
model_name = cli.model
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
model = AutoModelForCausalLM.from_pretrained(model_name)


def reward_fn(prompts, completions, **kwargs):
    """Reward for each completion (one float each): port the scoring code of the PPO loop here."""
    raise NotImplementedError("trl-compat: port the PPO reward computation into this function")


# trl-compat: GRPO and Online DPO read text prompts; rebuild them from the PPO-era input_ids
if "prompt" not in ds.column_names:
    ds = ds.with_format(None).map(
        lambda example: {"prompt": tok.decode(example["input_ids"], skip_special_tokens=True)},
        remove_columns=[c for c in ("input_ids", "attention_mask") if c in ds.column_names],
    )

# TODO(trl-compat): write the reward: `reward_fn(prompts, completions, **kwargs)`... [ppo-to-grpo]
ppo_trainer = GRPOTrainer(
    model=model,
    reward_funcs=reward_fn,
    args=config,
    train_dataset=ds,
    processing_class=tok,
)
print(model_name, Settings.label)
