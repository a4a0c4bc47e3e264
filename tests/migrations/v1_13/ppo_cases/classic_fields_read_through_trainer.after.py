# the model name is read back through the trainer's config (`ppo_trainer.config.model_name`); a config built as a
# class attribute keeps its marker (a binding in a class body is not visible to the reads)
from trl import GRPOConfig, GRPOTrainer
from transformers import AutoModelForCausalLM


class Settings:
    # TODO(trl-compat): PPO config fields with no GRPO successor were removed: model_name=DEFAULTS.model (tracking only; the model is the trainer's `model`) (see MIGRATION.md#ppo-config-fields)
    # TODO(trl-compat): learning_rate was not set: its default differs across the TRL releases this file could run on (1e-05 in 0.4.0..0.7.10; 1.41e-05 in 0.7.11..0.11.4): pin trl; 1.41e-05 written (see MIGRATION.md#ppo-config-fields)
    # TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted kl_coef*KL from the reward per token (classic: adaptive controller) while GRPO adds beta*KL(k3) to the loss; with beta != 0 and no PEFT, GRPO reloads the reference model from model.config._name_or_path (no ref_model argument). Tune beta (GRPO default 0.0 = no reference model) (see MIGRATION.md#ppo-kl-beta)
    # TODO(trl-compat): PPO scored 4 prompts x 1 response per step; GRPO now samples 2 prompt(s) x 2 completions per generation batch of 4 (num_generations must divide it). Adjust num_generations / steps_per_generation if you want more prompts per step (see MIGRATION.md#ppo-batch-size)
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
    # TODO(trl-compat): ppo.model_name: GRPOConfig has no `model_name` field (see MIGRATION.md#ppo-config-fields)
    label = ppo.model_name


# trl-compat: PPO config values read below (GRPOConfig has no such fields)
model_name = cli.model
# TODO(trl-compat): PPO config fields with no GRPO successor were removed: model_name=cli.model (tracking only; the model is the trainer's `model`) (see MIGRATION.md#ppo-config-fields)
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

# TODO(trl-compat): write the reward: `reward_fn(prompts, completions, **kwargs)` must return one float per completion (it replaces the scores passed to ppo_trainer.step) (see MIGRATION.md#ppo-reward-function)
ppo_trainer = GRPOTrainer(
    model=model,
    reward_funcs=reward_fn,
    args=config,
    train_dataset=ds,
    processing_class=tok,
)
print(model_name, Settings.label)
