import trl
from packaging import version
from transformers.utils.versions import require_version

try:
    from trl import GRPOConfig, GRPOTrainer
except ImportError:
    GRPOTrainer = object
    GRPOConfig = None

# TODO(trl-compat): "trl>=0.8.6,<=0.9.6": the repository's own TRL version check; the migrated code needs trl >=1.16.0 (see MIGRATION.md#ppo-to-grpo)
require_version("trl>=0.8.6,<=0.9.6")
# TODO(trl-compat): a comparison against the installed TRL version: PPO code paths are gone in TRL 1.13; update or drop the check (see MIGRATION.md#ppo-to-grpo)
if version.parse(trl.__version__) < version.parse("0.12"):
    print("classic trl")
name = "PPO"
# TODO(trl-compat): `getattr(trl, f"{name}Trainer")` builds a TRL name at run time: PPO names are gone in TRL 1.13 (see MIGRATION.md#ppo-to-grpo)
cls = getattr(trl, f"{name}Trainer")
# TODO(trl-compat): registry key "PPO" now maps to trl's GRPO class: rename the key or the entry (see MIGRATION.md#ppo-to-grpo)
TRAINERS = {"PPO": trl.GRPOTrainer}
# TODO(trl-compat): learning_rate was not set: its default differs across the TRL releases this file could run on (1e-05 in 0.4.0..0.7.10; 1.41e-05 in 0.7.11..0.11.4): pin trl; 1.41e-05 written (see MIGRATION.md#ppo-config-fields)
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted kl_coef*KL from the reward per token (classic: adaptive controller) while GRPO adds beta*KL(k3) to the loss; with beta != 0 and no PEFT, GRPO reloads the reference model from model.config._name_or_path (no ref_model argument). Tune beta (GRPO default 0.0 = no reference model) (see MIGRATION.md#ppo-kl-beta)
# TODO(trl-compat): PPO scored 8 prompts x 1 response per step; GRPO now samples 2 prompt(s) x 4 completions per generation batch of 8 (num_generations must divide it). Adjust num_generations / steps_per_generation if you want more prompts per step (see MIGRATION.md#ppo-batch-size)
config = GRPOConfig(
    learning_rate=1.41e-5,
    seed=0,
    num_iterations=4,
    beta=0.2,
    report_to="none",
    max_grad_norm=0.0,
    gradient_checkpointing=False,
    bf16=False,
    per_device_train_batch_size=8,
    num_generations=4,
)
