import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from trl import AutoModelForCausalLMWithValueHead, PPOConfig, PPOTrainer, create_reference_model

config = PPOConfig(model_name="facebook/opt-125m", batch_size=16, mini_batch_size=16, ppo_epochs=2, init_kl_coef=0.05)
tokenizer = AutoTokenizer.from_pretrained(config.model_name)
model = AutoModelForCausalLMWithValueHead.from_pretrained(config.model_name)
ref_model = create_reference_model(model)
reward_model = AutoModelForSequenceClassification.from_pretrained("OpenAssistant/reward-model-deberta-v3-base")
reward_tokenizer = AutoTokenizer.from_pretrained("OpenAssistant/reward-model-deberta-v3-base")
dataset = build_dataset(tokenizer)  # noqa: F821 - defined elsewhere in the user's project
ppo_trainer = PPOTrainer(config, model, ref_model, tokenizer, dataset=dataset, data_collator=collator)  # noqa: F821
generation_kwargs = {"max_new_tokens": 32, "do_sample": True, "pad_token_id": tokenizer.eos_token_id}

for epoch, batch in enumerate(ppo_trainer.dataloader):
    query_tensors = batch["input_ids"]
    response_tensors = ppo_trainer.generate(query_tensors, return_prompt=False, **generation_kwargs)
    batch["response"] = [tokenizer.decode(r.squeeze(), skip_special_tokens=True) for r in response_tensors]
    inputs = reward_tokenizer(batch["query"], batch["response"], return_tensors="pt", padding=True)
    with torch.no_grad():
        scores = reward_model(**inputs).logits[:, 0]
    rewards = [s for s in scores]
    stats = ppo_trainer.step(query_tensors, response_tensors, rewards)
    ppo_trainer.log_stats(stats, batch, rewards)

ppo_trainer.save_pretrained("opt-ppo")
