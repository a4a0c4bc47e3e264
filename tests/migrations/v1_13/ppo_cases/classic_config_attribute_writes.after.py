from accelerate.utils import DistributedDataParallelKwargs
from trl import GRPOConfig

# TODO(trl-compat): PPO config fields with no GRPO successor were removed: model_name="gpt2" (tracking only; the model is the trainer's `model`); accelerator_kwargs={"mixed_precision": "bf16"} (no successor (TrainingArguments configure accelerate)) (see MIGRATION.md#ppo-config-fields)
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted kl_coef*KL from the reward per token (classic: adaptive controller) while GRPO adds beta*KL(k3) to the loss; with beta != 0 and no PEFT, GRPO reloads the reference model from model.config._name_or_path (no ref_model argument). Tune beta (GRPO default 0.0 = no reference model) (see MIGRATION.md#ppo-kl-beta)
# TODO(trl-compat): PPO scored 16 prompts x 1 response per step; GRPO now samples 2 prompt(s) x 8 completions per generation batch of 16 (num_generations must divide it). Adjust num_generations / steps_per_generation if you want more prompts per step (see MIGRATION.md#ppo-batch-size)
# TODO(trl-compat): steps=3200 (classic: samples, 200 PPO steps of 16) -> max_steps=3200 optimizer steps (16 per generation batch); max_steps overrides num_train_epochs (see MIGRATION.md#ppo-config-fields)
ppo_config = GRPOConfig(
    learning_rate=1.41e-5,
    seed=0,
    num_iterations=4,
    beta=0.2,
    report_to="none",
    max_grad_norm=0.0,
    gradient_checkpointing=False,
    bf16=True,
    per_device_train_batch_size=4,
    steps_per_generation=4,
    num_generations=8,
    max_steps=3200,
)
# TODO(trl-compat): ppo_config.accelerator_kwargs is written here; GRPOConfig has no `accelerator_kwargs` field (see MIGRATION.md#ppo-config-fields)
ppo_config.accelerator_kwargs["kwargs_handlers"] = [DistributedDataParallelKwargs(find_unused_parameters=True)]
# TODO(trl-compat): ppo_config.tracker_kwargs is written here; GRPOConfig has no `tracker_kwargs` field (see MIGRATION.md#ppo-config-fields)
ppo_config.tracker_kwargs.update({"wandb": {"name": "run-1"}})
# TODO(trl-compat): ppo_config.total_ppo_epochs (classic: ceil(steps / batch_size)) does not exist on GRPOConfig; max_steps is the training length (see MIGRATION.md#ppo-config-fields)
print(f"training for {ppo_config.total_ppo_epochs} PPO steps")
