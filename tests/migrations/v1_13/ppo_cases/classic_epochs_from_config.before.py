import torch
from tqdm import tqdm
from trl import AutoModelForCausalLMWithValueHead, PPOConfig, PPOTrainer

config = PPOConfig(model_name="gpt2", steps=2560, batch_size=256, mini_batch_size=32, ppo_epochs=2)
model = AutoModelForCausalLMWithValueHead.from_pretrained(config.model_name)
ppo_trainer = PPOTrainer(config, model, None, tokenizer, dataset=dataset)  # noqa: F821

for epoch in tqdm(range(config.total_ppo_epochs)):
    for batch in ppo_trainer.dataloader:
        query_tensors = batch["input_ids"]
        response_tensors = ppo_trainer.generate(query_tensors, return_prompt=False, max_new_tokens=20)
        batch["response"] = tokenizer.batch_decode(response_tensors)  # noqa: F821
        rewards = [torch.tensor(float(len(r))) for r in batch["response"]]
        ppo_trainer.step(query_tensors, response_tensors, rewards)
