# TODO(trl-compat): star import from TRL: names such as PPOTrainer, PPOConfig, AutoModelForCausalLMWithValueHead and set_seed no longer exist in TRL >= 1.13; import the names you use explicitly so trl-compat can migrate them (see MIGRATION.md#ppo-star-import)
from trl import *  # noqa: F403

config = PPOConfig(batch_size=8)  # noqa: F405
