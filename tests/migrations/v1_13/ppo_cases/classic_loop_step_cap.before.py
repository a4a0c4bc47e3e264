import torch
from transformers import AutoTokenizer, pipeline

from trl import AutoModelForCausalLMWithValueHead, PPOConfig, PPOTrainer

config = PPOConfig(model_name="gpt2", batch_size=8, mini_batch_size=4)
tokenizer = AutoTokenizer.from_pretrained(config.model_name)
model = AutoModelForCausalLMWithValueHead.from_pretrained(config.model_name)
ppo_trainer = PPOTrainer(config, model, None, tokenizer, dataset=dataset)
scorer = pipeline("text-classification", model="some/classifier")
max_steps_to_run = 10

for step, batch in enumerate(ppo_trainer.dataloader):
    # a tutorial's short demo run: only the first few batches
    if step >= max_steps_to_run:
        break
    query_tensors = batch["input_ids"]
    responses = []
    for q in query_tensors:
        out = ppo_trainer.generate(q, max_new_tokens=16)
        responses.append(out.squeeze())
        if len(responses) > 100:
            break  # leaves the inner generation loop only
    batch["response"] = [tokenizer.decode(r) for r in responses]
    texts = [q + r for q, r in zip(batch["query"], batch["response"])]
    rewards = [torch.tensor(o["score"]) for o in scorer(texts)]
    stats = ppo_trainer.step(query_tensors, responses, rewards)
