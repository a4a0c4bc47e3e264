import torch
from trl import PPOConfig, PPOTrainer

config = PPOConfig(batch_size=4, mini_batch_size=2, learning_rate=2e-5, init_kl_coef=0.05, adap_kl_ctrl=False)
trainer = PPOTrainer(config, model, ref_model, tokenizer, dataset=ds)  # noqa: F821

for batch in trainer.dataloader:
    query_tensors = batch["input_ids"]
    queries = tokenizer.batch_decode(query_tensors, skip_special_tokens=True)  # noqa: F821
    response_tensors = trainer.generate(query_tensors, return_prompt=False, max_new_tokens=32, temperature=0.8)
    responses = tokenizer.batch_decode(response_tensors, skip_special_tokens=True)  # noqa: F821
    scores = judge(queries, responses, device=trainer.current_device)  # noqa: F821
    rewards = [torch.tensor(s, dtype=torch.float) for s in scores]
    trainer.step(query_tensors, response_tensors, rewards)
print(trainer.current_device)
