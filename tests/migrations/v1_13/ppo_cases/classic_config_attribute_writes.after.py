from accelerate.utils import DistributedDataParallelKwargs
from trl import GRPOConfig

# TODO(trl-compat): PPO config fields with no GRPO successor were removed [ppo-to-grpo]
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted... [ppo-to-grpo]
# TODO(trl-compat): PPO scored 16 prompts x 1 response per step [ppo-to-grpo]
# TODO(trl-compat): steps=3200 (classic: samples, 200 PPO steps of 16) ->... [ppo-to-grpo]
ppo_config = GRPOConfig(
    learning_rate=1.41e-5,
    seed=0,
    num_iterations=4,
    beta=0.2,
    report_to="none",
    max_grad_norm=0.0,
    gradient_checkpointing=False,
    bf16=True,
    per_device_train_batch_size=4,
    steps_per_generation=4,
    num_generations=8,
    max_steps=3200,
)
# TODO(trl-compat): ppo_config.accelerator_kwargs is written here [ppo-to-grpo]
ppo_config.accelerator_kwargs["kwargs_handlers"] = [DistributedDataParallelKwargs(find_unused_parameters=True)]
# TODO(trl-compat): ppo_config.tracker_kwargs is written here [ppo-to-grpo]
ppo_config.tracker_kwargs.update({"wandb": {"name": "run-1"}})
# TODO(trl-compat): ppo_config.total_ppo_epochs (classic: ceil(steps / batch_size))... [ppo-to-grpo]
print(f"training for {ppo_config.total_ppo_epochs} PPO steps")
