import functools

from trl import GRPOConfig, GRPOTrainer


@functools.lru_cache
def make_config(lr: float = 3e-6) -> "GRPOConfig":
    # TODO(trl-compat): beta=0.05 carries PPO's kl_coef, but PPO subtracted kl_coef*KL from the reward per token (classic: adaptive controller) while GRPO adds beta*KL(k3) to the loss; with beta != 0 and no PEFT, GRPO reloads the reference model from model.config._name_or_path (no ref_model argument). Tune beta (GRPO default 0.0 = no reference model) (see MIGRATION.md#ppo-kl-beta)
    return GRPOConfig(
        output_dir=f"runs/{lr}",
        learning_rate=lr,
        per_device_train_batch_size=4,
        temperature=0.7,
        max_completion_length=53,
        num_iterations=4,
        beta=0.05,
        num_generations=2,
    )


async def train_async(cfg: GRPOConfig) -> None:
    # TODO(trl-compat): GRPOTrainer reads a `prompt` column (text or chat messages); PPO datasets held `input_ids`: make sure this dataset has `prompt` (see MIGRATION.md#ppo-dataset-prompt)
    # TODO(trl-compat): the value model `vm` is no longer used (GRPO estimates advantages from groups of completions); remove its construction (see MIGRATION.md#ppo-value-model)
    if (trainer := GRPOTrainer(
        model=m,
        reward_funcs=rm,
        args=cfg,
        train_dataset=ds,
        processing_class=tok,
        reward_processing_classes=tok,
    )) is not None:  # noqa: F821
        trainer.train()


match make_config():
    case GRPOConfig(learning_rate=lr):
        print(f"{lr=} {GRPOTrainer.__name__!r}", [GRPOConfig, GRPOTrainer][0])
    case _:
        pass
