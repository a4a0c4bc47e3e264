# the config is built inside main(); a helper at module level has its own local `model_name`
from trl import AutoModelForCausalLMWithValueHead, PPOConfig, PPOTrainer


def model_card(model_name):
    return f"PPO-tuned {model_name}"


def main(args):
    ppo_config = PPOConfig(model_name=args.base_model, batch_size=args.batch_size, mini_batch_size=args.batch_size)
    model = AutoModelForCausalLMWithValueHead.from_pretrained(ppo_config.model_name)
    trainer = PPOTrainer(ppo_config, model)
    print(model_card(ppo_config.model_name))
    return trainer
