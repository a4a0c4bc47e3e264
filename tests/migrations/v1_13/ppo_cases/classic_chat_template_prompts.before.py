import torch
from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer
from trl import PPOConfig, PPOTrainer

config = PPOConfig(model_name="Qwen/Qwen2.5-0.5B-Instruct", batch_size=4, mini_batch_size=4)
tokenizer = AutoTokenizer.from_pretrained(config.model_name)
model = AutoModelForCausalLM.from_pretrained(config.model_name)


def to_ids(sample):
    messages = [{"role": "user", "content": sample["question"]}]
    sample["input_ids"] = tokenizer.apply_chat_template(messages, add_generation_prompt=True)
    return sample


dataset = load_dataset("gsm8k", "main", split="train").map(to_ids)
dataset.set_format("torch")
ppo_trainer = PPOTrainer(config, model, None, tokenizer, dataset=dataset)
for batch in ppo_trainer.dataloader:
    query_tensors = batch["input_ids"]
    response_tensors = ppo_trainer.generate(query_tensors, return_prompt=False, max_new_tokens=64)
    batch["response"] = tokenizer.batch_decode(response_tensors, skip_special_tokens=True)
    batch["query"] = tokenizer.batch_decode(query_tensors, skip_special_tokens=True)
    rewards = [torch.tensor(float("####" in r)) for r in batch["response"]]
    stats = ppo_trainer.step(query_tensors, response_tensors, rewards)
    ppo_trainer.log_stats(stats, batch, rewards)
