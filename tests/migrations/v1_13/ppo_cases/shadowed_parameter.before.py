from trl import PPOConfig


def build(PPOConfig=dict):
    return PPOConfig(batch_size=4)


default = PPOConfig(output_dir="o")
