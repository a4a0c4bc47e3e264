# the config is built inside main(); a helper at module level has its own local `model_name`
from trl import GRPOConfig, GRPOTrainer
from transformers import AutoModelForCausalLM


def model_card(model_name):
    return f"PPO-tuned {model_name}"


def main(args):
    # trl-compat: PPO config values read below (GRPOConfig has no such fields)
    ppo_config_model_name = args.base_model
    # TODO(trl-compat): PPO config fields with no GRPO successor were removed [ppo-to-grpo]
    # TODO(trl-compat): learning_rate=1.41e-05 written, old default uncertain [ppo-to-grpo]
    # TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted... [ppo-to-grpo]
    # TODO(trl-compat): PPO batch_size=args.batch_size prompts per step [ppo-to-grpo]
    ppo_config = GRPOConfig(
        learning_rate=1.41e-5,
        seed=0,
        num_iterations=4,
        beta=0.2,
        report_to="none",
        max_grad_norm=0.0,
        gradient_checkpointing=False,
        bf16=False,
        per_device_train_batch_size=args.batch_size,
    )
    model = AutoModelForCausalLM.from_pretrained(ppo_config_model_name)

    def reward_fn(prompts, completions, **kwargs):
        """Reward for each completion (one float each): port the scoring code of the PPO loop here."""
        raise NotImplementedError("trl-compat: port the PPO reward computation into this function")

    # TODO(trl-compat): write the reward: `reward_fn(prompts, completions... [ppo-to-grpo]
    # TODO(trl-compat): GRPOTrainer needs a train_dataset with a `prompt` column [ppo-to-grpo]
    trainer = GRPOTrainer(model=model, reward_funcs=reward_fn, args=ppo_config)
    print(model_card(ppo_config_model_name))
    return trainer
