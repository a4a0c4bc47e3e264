import yaml

from trl import GRPOConfig

with open("ppo.yaml") as f:
    cfg = yaml.safe_load(f)
# TODO(trl-compat): GRPO needs num_generations >= 2 completions per prompt and... [ppo-to-grpo]
# TODO(trl-compat): this config is built from cfg["ppo"] (not visible statically) [ppo-to-grpo]
config = GRPOConfig(**cfg["ppo"])
