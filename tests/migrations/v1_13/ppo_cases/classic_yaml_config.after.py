import yaml

from trl import GRPOConfig

with open("ppo.yaml") as f:
    cfg = yaml.safe_load(f)
# TODO(trl-compat): GRPO needs num_generations >= 2 completions per prompt and num_generations must divide per_device_train_batch_size * num_processes * steps_per_generation; the batch sizes are not static here, so set num_generations explicitly (see MIGRATION.md#ppo-batch-size)
# TODO(trl-compat): this config is built from cfg["ppo"] (not visible statically): rename its keys for GRPOConfig as in the field table (kl_coef/init_kl_coef->beta, cliprange->epsilon, num_ppo_epochs/ppo_epochs->num_iterations, response_length->max_completion_length, exp_name->run_name, log_with->report_to) and drop the PPO-only keys (see MIGRATION.md#ppo-config-sources)
config = GRPOConfig(**cfg["ppo"])
