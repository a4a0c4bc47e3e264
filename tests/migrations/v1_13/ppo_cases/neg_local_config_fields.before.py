# a project's own PPOConfig (not TRL's) next to a TRL import: its fields are the project's, never rewritten
from dataclasses import dataclass

from trl import SFTConfig


@dataclass
class PPOConfig:
    model_name: str = "gpt2"
    batch_size: int = 8
    trust_remote_code: bool = False


config = PPOConfig(model_name="my/model")
args = SFTConfig(output_dir="out")
print(config.model_name, config.batch_size, config.trust_remote_code)
