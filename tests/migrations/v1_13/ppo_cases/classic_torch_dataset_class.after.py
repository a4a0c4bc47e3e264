import torch
from torch.utils.data import Dataset
from transformers import AutoTokenizer, AutoModelForCausalLM

from trl import GRPOConfig, GRPOTrainer


class PromptFile(Dataset):
    """A torch-style dataset of tokenized prompts read from a file (no columns, no .map)."""

    def __init__(self, path, tokenizer):
        self.items = [tokenizer.encode(line) for line in open(path)]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return {"query": torch.tensor(self.items[i])}


# TODO(trl-compat): PPO config fields with no GRPO successor were removed [ppo-to-grpo]
# TODO(trl-compat): learning_rate=1.41e-05 written, old default uncertain (pin trl) [ppo-to-grpo]
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted... [ppo-to-grpo]
# TODO(trl-compat): PPO scored 4 prompts x 1 response per step [ppo-to-grpo]
config = GRPOConfig(
    learning_rate=1.41e-5,
    seed=0,
    num_iterations=4,
    beta=0.2,
    report_to="none",
    max_grad_norm=0.0,
    gradient_checkpointing=False,
    bf16=False,
    per_device_train_batch_size=2,
    steps_per_generation=2,
    num_generations=2,
)
tokenizer = AutoTokenizer.from_pretrained("gpt2")
model = AutoModelForCausalLM.from_pretrained("gpt2")
dataset = PromptFile("prompts.txt", tokenizer=tokenizer)


def reward_fn(prompts, completions, **kwargs):
    """Reward for each completion (one float each): port the scoring code of the PPO loop here."""
    raise NotImplementedError("trl-compat: port the PPO reward computation into this function")


# TODO(trl-compat): write the reward: `reward_fn(prompts, completions, **kwargs)`... [ppo-to-grpo]
# TODO(trl-compat): GRPOTrainer needs a datasets.Dataset with a `prompt` column [ppo-to-grpo]
ppo_trainer = GRPOTrainer(
    model=model,
    reward_funcs=reward_fn,
    args=config,
    train_dataset=dataset,
    processing_class=tokenizer,
)
