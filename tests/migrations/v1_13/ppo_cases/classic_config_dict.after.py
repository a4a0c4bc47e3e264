from trl import GRPOConfig

# TODO(trl-compat): PPO config fields with no GRPO successor were removed: model_name="gpt2" (tracking only; the model is the trainer's `model`) (see MIGRATION.md#ppo-config-fields)
# TODO(trl-compat): beta=0.1 carries PPO's init_kl_coef, but PPO subtracted kl_coef*KL from the reward per token (classic: adaptive controller) while GRPO adds beta*KL(k3) to the loss; with beta != 0 and no PEFT, GRPO reloads the reference model from model.config._name_or_path (no ref_model argument). Tune beta (GRPO default 0.0 = no reference model) (see MIGRATION.md#ppo-kl-beta)
# TODO(trl-compat): PPO scored 16 prompts x 1 response per step; GRPO now samples 2 prompt(s) x 8 completions per generation batch of 16 (num_generations must divide it). Adjust num_generations / steps_per_generation if you want more prompts per step (see MIGRATION.md#ppo-batch-size)
ppo_kwargs = {
    "learning_rate": 5e-6,
    "num_iterations": 2,
    "beta": 0.1,
    "report_to": "tensorboard",
    "seed": 0,
    "max_grad_norm": 0.0,
    "gradient_checkpointing": False,
    "bf16": False,
    "per_device_train_batch_size": 4,
    "steps_per_generation": 4,
    "num_generations": 8,
}
config = GRPOConfig(**ppo_kwargs)
