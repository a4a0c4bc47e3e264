from trl import GRPOConfig, GRPOTrainer

# TODO(trl-compat): learning_rate=1.41e-05 written, old default uncertain (pin trl) [ppo-to-grpo]
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted... [ppo-to-grpo]
# TODO(trl-compat): PPO scored 2 prompts x 1 response per step [ppo-to-grpo]
config = GRPOConfig(
    learning_rate=1.41e-5,
    seed=0,
    num_iterations=4,
    beta=0.2,
    report_to="none",
    max_grad_norm=0.0,
    gradient_checkpointing=False,
    bf16=False,
    per_device_train_batch_size=2,
    num_generations=2,
)


def reward_fn(prompts, completions, **kwargs):
    """Reward for each completion (one float each): port the scoring code of the PPO loop here."""
    raise NotImplementedError("trl-compat: port the PPO reward computation into this function")


# TODO(trl-compat): write the reward: `reward_fn(prompts, completions, **kwargs)`... [ppo-to-grpo]
# TODO(trl-compat): GRPOTrainer needs a train_dataset with a `prompt` column [ppo-to-grpo]
ppo_trainer = GRPOTrainer(model=model, reward_funcs=reward_fn, args=config, processing_class=tokenizer)  # noqa: F821


def train_on(queries, responses, scores):
    # TODO(trl-compat): ppo_trainer.step() does not exist on GRPOTrainer [ppo-to-grpo]
    stats = ppo_trainer.step(queries, responses, scores)
    # TODO(trl-compat): ppo_trainer.log_stats() does not exist on GRPOTrainer [ppo-to-grpo]
    ppo_trainer.log_stats(stats, {}, scores)
    return stats
