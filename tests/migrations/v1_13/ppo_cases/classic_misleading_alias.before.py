from trl import PPOConfig as HfPPOConfig
from trl import PPOTrainer as Trainer

config = HfPPOConfig(batch_size=8, mini_batch_size=8)
