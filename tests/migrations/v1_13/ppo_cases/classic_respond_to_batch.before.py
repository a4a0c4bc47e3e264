import torch
from trl import AutoModelForCausalLMWithValueHead, PPOConfig, PPOTrainer
from trl.core import respond_to_batch, set_seed

set_seed(0)
config = PPOConfig(batch_size=1, mini_batch_size=1)
model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
model_ref = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
ppo_trainer = PPOTrainer(config, model, model_ref, tokenizer)  # noqa: F821
query_tensor = tokenizer.encode("This morning I went to the ", return_tensors="pt")  # noqa: F821
response_tensor = respond_to_batch(model, query_tensor, txt_len=20)
reward = [torch.tensor(1.0)]
train_stats = ppo_trainer.step([query_tensor[0]], [response_tensor[0]], reward)
