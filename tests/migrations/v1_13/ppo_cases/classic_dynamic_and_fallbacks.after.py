import trl
from packaging import version
from transformers.utils.versions import require_version

try:
    from trl import GRPOConfig, GRPOTrainer
except ImportError:
    GRPOTrainer = object
    GRPOConfig = None

# TODO(trl-compat): "trl>=0.8.6,<=0.9.6": the repository's own TRL version check [ppo-to-grpo]
require_version("trl>=0.8.6,<=0.9.6")
# TODO(trl-compat): a comparison against the installed TRL version [ppo-to-grpo]
if version.parse(trl.__version__) < version.parse("0.12"):
    print("classic trl")
name = "PPO"
# TODO(trl-compat): `getattr(trl, f"{name}Trainer")` builds a TRL name at run time [ppo-to-grpo]
cls = getattr(trl, f"{name}Trainer")
# TODO(trl-compat): registry key "PPO" now maps to trl's GRPO class [ppo-to-grpo]
TRAINERS = {"PPO": trl.GRPOTrainer}
# TODO(trl-compat): learning_rate=1.41e-05 written, old default uncertain (pin trl) [ppo-to-grpo]
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted... [ppo-to-grpo]
# TODO(trl-compat): PPO scored 8 prompts x 1 response per step [ppo-to-grpo]
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
