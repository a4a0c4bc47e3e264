import functools

from trl import GRPOConfig, GRPOTrainer


@functools.lru_cache
def make_config(lr: float = 3e-6) -> "GRPOConfig":
    # TODO(trl-compat): beta=0.05 carries PPO's kl_coef, but PPO subtracted... [ppo-to-grpo]
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
    # TODO(trl-compat): GRPOTrainer reads a `prompt` column (text or chat messages) [ppo-to-grpo]
    # TODO(trl-compat): the value model `vm` is no longer used [ppo-to-grpo]
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
