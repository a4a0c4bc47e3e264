import torch
from trl import AutoModelForCausalLMWithValueHead, PPOConfig, PPOTrainer

config = PPOConfig(model_name="gpt2", batch_size=4, mini_batch_size=4)
model = AutoModelForCausalLMWithValueHead.from_pretrained(config.model_name)
ppo_trainer = PPOTrainer(config, model, None, tokenizer, dataset=dataset)  # noqa: F821

for batch in ppo_trainer.dataloader:
    query_tensors = batch["input_ids"]
    response_tensors = ppo_trainer.generate(query_tensors, return_prompt=False, max_new_tokens=8)
    # reward from token statistics: needs the tensors, not the texts
    rewards = [torch.tensor(float((r == 50256).sum())) - 0.01 * len(q) for q, r in zip(query_tensors, response_tensors)]
    stats = ppo_trainer.step(query_tensors, response_tensors, rewards)
