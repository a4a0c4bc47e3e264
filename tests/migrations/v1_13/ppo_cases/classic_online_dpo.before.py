import torch
from transformers import AutoTokenizer, pipeline
from trl import AutoModelForCausalLMWithValueHead, PPOConfig, PPOTrainer

config = PPOConfig(model_name="gpt2", learning_rate=1.41e-5, batch_size=8, mini_batch_size=4, init_kl_coef=0.2)
tokenizer = AutoTokenizer.from_pretrained(config.model_name)
model = AutoModelForCausalLMWithValueHead.from_pretrained(config.model_name)
ref_model = AutoModelForCausalLMWithValueHead.from_pretrained(config.model_name)
ppo_trainer = PPOTrainer(config, model, ref_model, tokenizer, dataset=dataset)  # noqa: F821
sentiment_pipe = pipeline("sentiment-analysis", model="lvwerra/distilbert-imdb")

for batch in ppo_trainer.dataloader:
    query_tensors = batch["input_ids"]
    response_tensors = ppo_trainer.generate(query_tensors, return_prompt=False, max_new_tokens=24)
    batch["response"] = tokenizer.batch_decode(response_tensors)
    pipe_outputs = sentiment_pipe(batch["response"])
    rewards = [torch.tensor(o["score"]) for o in pipe_outputs]
    stats = ppo_trainer.step(query_tensors, response_tensors, rewards)
