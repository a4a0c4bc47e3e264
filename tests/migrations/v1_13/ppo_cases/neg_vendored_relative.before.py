from .trl import PPOConfig, PPOTrainer
from .trl.core import LengthSampler, set_seed

set_seed(0)
config = PPOConfig(batch_size=8, mini_batch_size=8)
trainer = PPOTrainer(config, None, None, None)
sampler = LengthSampler(2, 8)
