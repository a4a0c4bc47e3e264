import torch
from trl import AutoModelForCausalLMWithValueHead, PPOConfig, PPOTrainer
from trl.core import LengthSampler

config = PPOConfig(model_name="gpt2", batch_size=6, mini_batch_size=3, ppo_epochs=1, cliprange=0.1)
model = AutoModelForCausalLMWithValueHead.from_pretrained(config.model_name)
ppo_trainer = PPOTrainer(config, model, None, tokenizer, dataset=dataset)  # noqa: F821
output_length_sampler = LengthSampler(4, 10)

for epoch in range(3):
    for batch in ppo_trainer.dataloader:
        query_tensors = batch["input_ids"]
        response_tensors = ppo_trainer.generate(query_tensors, return_prompt=False, length_sampler=output_length_sampler)
        batch["response"] = tokenizer.batch_decode(response_tensors)  # noqa: F821
        rewards = [torch.tensor(1.0) if "good" in r else torch.tensor(0.0) for r in batch["response"]]
        ppo_trainer.step(query_tensors, response_tensors, rewards)
