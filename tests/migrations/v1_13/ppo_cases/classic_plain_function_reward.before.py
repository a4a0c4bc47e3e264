from transformers import AutoTokenizer
from trl import AutoModelForCausalLMWithValueHead, PPOConfig, PPOTrainer


def length_reward(texts):
    return [float(len(t.split())) for t in texts]


config = PPOConfig(batch_size=4, mini_batch_size=2, gradient_accumulation_steps=1, learning_rate=3e-6, seed=7)
tokenizer = AutoTokenizer.from_pretrained("gpt2")
model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
trainer = PPOTrainer(config=config, model=model, tokenizer=tokenizer, dataset=make_dataset())  # noqa: F821

for batch in trainer.dataloader:
    queries = batch["input_ids"]
    responses = trainer.generate(queries, return_prompt=False, max_new_tokens=16, top_k=0, top_p=0.9)
    response_texts = tokenizer.batch_decode(responses, skip_special_tokens=True)
    rewards = length_reward(response_texts)
    trainer.step(queries, responses, rewards)
