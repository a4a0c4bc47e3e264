from trl import GRPOConfig

# TODO(trl-compat): PPO config fields with no GRPO successor were removed: gamma=0.99 (no critic / GAE); lam=0.9 (no critic / GAE) (see MIGRATION.md#ppo-config-fields)
# TODO(trl-compat): learning_rate was not set: its default differs across the TRL releases this file could run on (1e-05 in 0.4.0..0.7.10; 1.41e-05 in 0.7.11..0.11.4): pin trl; 1.41e-05 written (see MIGRATION.md#ppo-config-fields)
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted kl_coef*KL from the reward per token (classic: adaptive controller) while GRPO adds beta*KL(k3) to the loss; with beta != 0 and no PEFT, GRPO reloads the reference model from model.config._name_or_path (no ref_model argument). Tune beta (GRPO default 0.0 = no reference model) (see MIGRATION.md#ppo-kl-beta)
# TODO(trl-compat): steps=10000 (classic: samples, 10000 PPO steps of 1) -> max_steps=80000 optimizer steps (8 per generation batch); max_steps overrides num_train_epochs (see MIGRATION.md#ppo-config-fields)
config = GRPOConfig(
    learning_rate=1.41e-5,
    seed=0,
    num_iterations=4,
    beta=0.2,
    report_to="none",
    max_grad_norm=0.0,
    gradient_checkpointing=False,
    bf16=False,
    per_device_train_batch_size=1,
    steps_per_generation=2,
    num_generations=2,
    max_steps=80000,
)
