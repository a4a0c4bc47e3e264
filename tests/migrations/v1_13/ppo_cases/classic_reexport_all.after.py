"""Project-wide trainer imports (`from mypkg.trainers import *`)."""

from trl import GRPOConfig, GRPOTrainer

# TODO(trl-compat): __all__ re-exports PPOConfig, PPOTrainer [ppo-to-grpo]
__all__ = ["PPOConfig", "PPOTrainer"]
