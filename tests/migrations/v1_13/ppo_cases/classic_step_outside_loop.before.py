from trl import PPOConfig, PPOTrainer

config = PPOConfig(batch_size=2, mini_batch_size=2)
ppo_trainer = PPOTrainer(config, model, None, tokenizer)  # noqa: F821


def train_on(queries, responses, scores):
    stats = ppo_trainer.step(queries, responses, scores)
    ppo_trainer.log_stats(stats, {}, scores)
    return stats
