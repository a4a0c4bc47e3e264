import torch
from datasets import load_dataset
from tqdm import tqdm
from transformers import AutoTokenizer, pipeline

from trl import AutoModelForCausalLMWithValueHead, PPOConfig, PPOTrainer

config = PPOConfig(model_name="gpt2", learning_rate=1e-5, batch_size=8, mini_batch_size=4, log_with=None)
tokenizer = AutoTokenizer.from_pretrained(config.model_name)
tokenizer.pad_token = tokenizer.eos_token


def tokenize(sample):
    sample["input_ids"] = tokenizer.encode(sample["text"])[:8]
    sample["query"] = tokenizer.decode(sample["input_ids"])
    return sample


dataset = load_dataset("imdb", split="train").map(tokenize)
dataset.set_format(type="torch")
model = AutoModelForCausalLMWithValueHead.from_pretrained(config.model_name)
ppo_trainer = PPOTrainer(config, model, None, tokenizer, dataset=dataset)
sentiment_pipe = pipeline("sentiment-analysis", model="lvwerra/distilbert-imdb", device=ppo_trainer.accelerator.device)
generation_kwargs = {"min_length": -1, "top_k": 0.0, "top_p": 1.0, "do_sample": True, "max_new_tokens": 20}

for batch in tqdm(ppo_trainer.dataloader):
    query_tensors = batch["input_ids"]
    response_tensors = ppo_trainer.generate(query_tensors, return_prompt=False, **generation_kwargs)
    batch["response"] = tokenizer.batch_decode(response_tensors)
    texts = [q + r for q, r in zip(batch["query"], batch["response"])]
    pipe_outputs = sentiment_pipe(texts, top_k=None, function_to_apply="none")
    rewards = [torch.tensor(output[1]["score"]) for output in pipe_outputs]
    stats = ppo_trainer.step(query_tensors, response_tensors, rewards)
    ppo_trainer.log_stats(stats, batch, rewards)

model.save_pretrained("out")
