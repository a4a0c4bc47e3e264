# the script overwrites a PPO-only field after building the config: its reads stay marked
from trl import GRPOConfig, GRPOTrainer
from transformers import AutoModelForCausalLM

# TODO(trl-compat): PPO config fields with no GRPO successor were removed [ppo-to-grpo]
# TODO(trl-compat): learning_rate=1.41e-05 written, old default uncertain (pin trl) [ppo-to-grpo]
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted... [ppo-to-grpo]
# TODO(trl-compat): PPO scored 16 prompts x 1 response per step [ppo-to-grpo]
config = GRPOConfig(
    learning_rate=1.41e-5,
    seed=0,
    num_iterations=4,
    beta=0.2,
    report_to="none",
    max_grad_norm=0.0,
    gradient_checkpointing=False,
    bf16=False,
    per_device_train_batch_size=4,
    steps_per_generation=4,
    num_generations=8,
)
if use_local_checkpoint:
    # TODO(trl-compat): config.model_name is written here [ppo-to-grpo]
    config.model_name = "./checkpoints/sft"
# TODO(trl-compat): config.model_name: GRPOConfig has no `model_name` field [ppo-to-grpo]
model = AutoModelForCausalLM.from_pretrained(config.model_name)


def reward_fn(prompts, completions, **kwargs):
    """Reward for each completion (one float each): port the scoring code of the PPO loop here."""
    raise NotImplementedError("trl-compat: port the PPO reward computation into this function")


# TODO(trl-compat): write the reward: `reward_fn(prompts, completions, **kwargs)`... [ppo-to-grpo]
# TODO(trl-compat): GRPOTrainer needs a train_dataset with a `prompt` column [ppo-to-grpo]
trainer = GRPOTrainer(model=model, reward_funcs=reward_fn, args=config)
