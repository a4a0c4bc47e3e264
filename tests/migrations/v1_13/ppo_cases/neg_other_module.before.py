from mylib.trl import PPOTrainer
from rl.ppo import PPOConfig
import trl_utils as trl

config = PPOConfig(batch_size=8)
trainer = PPOTrainer(config)
other = trl.PPOTrainer(config)
trainer.step([], [], [])
