# TODO(trl-compat): star import from TRL: names such as PPOTrainer, PPOConfig... [ppo-helpers]
from trl import *  # noqa: F403

config = PPOConfig(batch_size=8)  # noqa: F405
