"""Project-wide trainer imports (`from mypkg.trainers import *`)."""

from trl import PPOConfig, PPOTrainer

__all__ = ["PPOConfig", "PPOTrainer"]
