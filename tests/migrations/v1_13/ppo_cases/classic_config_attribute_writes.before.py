from accelerate.utils import DistributedDataParallelKwargs
from trl import PPOConfig

ppo_config = PPOConfig(
    model_name="gpt2",
    learning_rate=1.41e-5,
    batch_size=16,
    mini_batch_size=4,
    steps=3200,
    accelerator_kwargs={"mixed_precision": "bf16"},
)
ppo_config.accelerator_kwargs["kwargs_handlers"] = [DistributedDataParallelKwargs(find_unused_parameters=True)]
ppo_config.tracker_kwargs.update({"wandb": {"name": "run-1"}})
print(f"training for {ppo_config.total_ppo_epochs} PPO steps")
