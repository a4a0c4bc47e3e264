# trl 0.1 (nbdev era): trl.gpt2 / trl.ppo
import torch
from transformers import GPT2Tokenizer
from trl.gpt2 import GPT2HeadWithValueModel, respond_to_batch
from trl.ppo import PPOTrainer

gpt2_model = GPT2HeadWithValueModel.from_pretrained("gpt2")
gpt2_model_ref = GPT2HeadWithValueModel.from_pretrained("gpt2")
gpt2_tokenizer = GPT2Tokenizer.from_pretrained("gpt2")
ppo_config = {"batch_size": 1, "forward_batch_size": 1}
ppo_trainer = PPOTrainer(gpt2_model, gpt2_model_ref, gpt2_tokenizer, **ppo_config)
query_tensor = gpt2_tokenizer.encode(" This movie was really", return_tensors="pt")
response_tensor = respond_to_batch(gpt2_model, query_tensor)
train_stats = ppo_trainer.step(query_tensor, response_tensor, torch.tensor([1.0]))
