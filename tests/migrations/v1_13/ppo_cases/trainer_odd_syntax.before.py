import functools

from trl import PPOConfig, PPOTrainer


@functools.lru_cache
def make_config(lr: float = 3e-6) -> "PPOConfig":
    return PPOConfig(output_dir=f"runs/{lr}", learning_rate=lr, per_device_train_batch_size=4)


async def train_async(cfg: PPOConfig) -> None:
    if (trainer := PPOTrainer(args=cfg, processing_class=tok, model=m, ref_model=None,  # noqa: F821
                              reward_model=rm, value_model=vm, train_dataset=ds)) is not None:  # noqa: F821
        trainer.train()


match make_config():
    case PPOConfig(learning_rate=lr):
        print(f"{lr=} {PPOTrainer.__name__!r}", [PPOConfig, PPOTrainer][0])
    case _:
        pass
