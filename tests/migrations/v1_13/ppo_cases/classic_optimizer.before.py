import torch
from trl import AutoModelForCausalLMWithValueHead, PPOConfig, PPOTrainer

config = PPOConfig(batch_size=8, mini_batch_size=8, learning_rate=1e-5)
model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
optimizer = torch.optim.SGD(model.parameters(), lr=config.learning_rate)
lr_scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.9)
ppo_trainer = PPOTrainer(
    config, model, None, tokenizer, dataset=dataset, optimizer=optimizer, lr_scheduler=lr_scheduler  # noqa: F821
)
