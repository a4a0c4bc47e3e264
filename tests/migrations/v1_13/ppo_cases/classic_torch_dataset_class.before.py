import torch
from torch.utils.data import Dataset
from transformers import AutoTokenizer

from trl import AutoModelForCausalLMWithValueHead, PPOConfig, PPOTrainer


class PromptFile(Dataset):
    """A torch-style dataset of tokenized prompts read from a file (no columns, no .map)."""

    def __init__(self, path, tokenizer):
        self.items = [tokenizer.encode(line) for line in open(path)]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return {"query": torch.tensor(self.items[i])}


config = PPOConfig(model_name="gpt2", batch_size=4, mini_batch_size=2)
tokenizer = AutoTokenizer.from_pretrained(config.model_name)
model = AutoModelForCausalLMWithValueHead.from_pretrained(config.model_name)
dataset = PromptFile("prompts.txt", tokenizer=tokenizer)
ppo_trainer = PPOTrainer(config, model, None, tokenizer, dataset)
