from trl import GRPOConfig, GRPOTrainer

# TODO(trl-compat): learning_rate was not set: its default differs across the TRL releases this file could run on (1e-05 in 0.4.0..0.7.10; 1.41e-05 in 0.7.11..0.11.4): pin trl; 1.41e-05 written (see MIGRATION.md#ppo-config-fields)
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted kl_coef*KL from the reward per token (classic: adaptive controller) while GRPO adds beta*KL(k3) to the loss; with beta != 0 and no PEFT, GRPO reloads the reference model from model.config._name_or_path (no ref_model argument). Tune beta (GRPO default 0.0 = no reference model) (see MIGRATION.md#ppo-kl-beta)
# TODO(trl-compat): PPO scored 2 prompts x 1 response per step; GRPO now samples 1 prompt(s) x 2 completions per generation batch of 2 (num_generations must divide it). Adjust num_generations / steps_per_generation if you want more prompts per step (see MIGRATION.md#ppo-batch-size)
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


# TODO(trl-compat): write the reward: `reward_fn(prompts, completions, **kwargs)` must return one float per completion (it replaces the scores passed to ppo_trainer.step) (see MIGRATION.md#ppo-reward-function)
# TODO(trl-compat): GRPOTrainer needs a train_dataset with a `prompt` column (see MIGRATION.md#ppo-dataset-prompt)
ppo_trainer = GRPOTrainer(model=model, reward_funcs=reward_fn, args=config, processing_class=tokenizer)  # noqa: F821


def train_on(queries, responses, scores):
    # TODO(trl-compat): ppo_trainer.step() does not exist on GRPOTrainer: training, generation and logging happen inside trainer.train() (see MIGRATION.md#ppo-trainer-attributes)
    stats = ppo_trainer.step(queries, responses, scores)
    # TODO(trl-compat): ppo_trainer.log_stats() does not exist on GRPOTrainer: training, generation and logging happen inside trainer.train() (see MIGRATION.md#ppo-trainer-attributes)
    ppo_trainer.log_stats(stats, {}, scores)
    return stats
