# We used to train with trl.PPOTrainer and PPOConfig(batch_size=8); see AutoModelForCausalLMWithValueHead.
DOC = "PPOTrainer(config, model, ref_model, tokenizer) from trl import PPOTrainer"
NOTE = """
from trl import PPOConfig, PPOTrainer
ppo_trainer.step(queries, responses, rewards)
"""


def explain():
    """PPOTrainer was removed in TRL 1.13: use GRPOTrainer."""
    return DOC + NOTE
