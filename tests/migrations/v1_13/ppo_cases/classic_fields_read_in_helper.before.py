# TRL 0.7-style gpt2-sentiment: the dataset builder takes the config and reads `config.query_dataset`
from datasets import load_dataset

from trl import AutoModelForCausalLMWithValueHead, PPOConfig, PPOTrainer


def build_dataset(config, input_min_text_length=2):
    ds = load_dataset(config.query_dataset, split="train")
    return ds.filter(lambda x: len(x["review"]) > input_min_text_length)


def describe(config):
    return f"PPO on {config.query_dataset}"


config = PPOConfig(model_name="lvwerra/gpt2-imdb", query_dataset=args.dataset, batch_size=8, mini_batch_size=8)
dataset = build_dataset(config)
print(describe(config), describe(other_config))
model = AutoModelForCausalLMWithValueHead.from_pretrained(config.model_name)
ppo_trainer = PPOTrainer(config, model, tokenizer=tok, dataset=dataset)


def card(config):
    return f"tuned from {config.model_name}"


print(card(other_config))
