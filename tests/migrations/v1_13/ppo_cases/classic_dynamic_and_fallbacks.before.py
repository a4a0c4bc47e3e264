import trl
from packaging import version
from transformers.utils.versions import require_version

try:
    from trl import PPOConfig, PPOTrainer
except ImportError:
    PPOTrainer = object
    PPOConfig = None

require_version("trl>=0.8.6,<=0.9.6")
if version.parse(trl.__version__) < version.parse("0.12"):
    print("classic trl")
name = "PPO"
cls = getattr(trl, f"{name}Trainer")
TRAINERS = {"PPO": trl.PPOTrainer}
config = PPOConfig(batch_size=8, mini_batch_size=8)
