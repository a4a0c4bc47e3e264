from trl import *  # noqa: F403

config = PPOConfig(batch_size=8)  # noqa: F405
