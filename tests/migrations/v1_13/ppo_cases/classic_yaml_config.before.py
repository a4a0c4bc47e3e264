import yaml

from trl import PPOConfig

with open("ppo.yaml") as f:
    cfg = yaml.safe_load(f)
config = PPOConfig(**cfg["ppo"])
