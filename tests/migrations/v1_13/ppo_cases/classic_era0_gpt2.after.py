# trl 0.1 (nbdev era): trl.gpt2 / trl.ppo
import torch
from transformers import GPT2Tokenizer, GPT2LMHeadModel
from trl import GRPOTrainer


def respond_to_batch(model, queries, txt_len=20, top_k=0, top_p=1.0):
    """trl.core.respond_to_batch (removed in TRL 0.14), kept by trl-compat: sample exactly txt_len new tokens."""
    output = model.generate(
        queries, max_new_tokens=txt_len, min_new_tokens=txt_len, do_sample=True, top_k=top_k, top_p=top_p
    )
    return output[:, queries.shape[-1] :]


gpt2_model = GPT2LMHeadModel.from_pretrained("gpt2")
gpt2_model_ref = GPT2LMHeadModel.from_pretrained("gpt2")
gpt2_tokenizer = GPT2Tokenizer.from_pretrained("gpt2")
ppo_config = {"batch_size": 1, "forward_batch_size": 1}
# TODO(trl-compat): the trainer is built from *args/**kwargs [ppo-to-grpo]
ppo_trainer = GRPOTrainer(gpt2_model, gpt2_model_ref, gpt2_tokenizer, **ppo_config)
query_tensor = gpt2_tokenizer.encode(" This movie was really", return_tensors="pt")
response_tensor = respond_to_batch(gpt2_model, query_tensor)
# TODO(trl-compat): ppo_trainer.step() does not exist on GRPOTrainer [ppo-to-grpo]
train_stats = ppo_trainer.step(query_tensor, response_tensor, torch.tensor([1.0]))
