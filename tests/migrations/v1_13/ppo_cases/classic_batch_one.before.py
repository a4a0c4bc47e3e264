from trl import PPOConfig

config = PPOConfig(batch_size=1, mini_batch_size=1, forward_batch_size=1, steps=10000, gamma=0.99, lam=0.9)
