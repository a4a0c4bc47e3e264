import torch
from transformers import AutoTokenizer, pipeline
from trl import AutoModelForCausalLMWithValueHead, PPOConfig, PPOTrainer


def main():
    config = PPOConfig(model_name="gpt2", batch_size=4, mini_batch_size=2, log_with=None)
    tokenizer = AutoTokenizer.from_pretrained(config.model_name)
    model = AutoModelForCausalLMWithValueHead.from_pretrained(config.model_name)
    dataset = load_prompts(tokenizer)  # noqa: F821
    ppo_trainer = PPOTrainer(config, model, None, tokenizer, dataset=dataset)
    classifier = pipeline("text-classification", model="my-org/toxicity")
    for batch in ppo_trainer.dataloader:
        query_tensors = batch["input_ids"]
        response_tensors = ppo_trainer.generate(query_tensors, return_prompt=False, max_new_tokens=12)
        batch["response"] = tokenizer.batch_decode(response_tensors, skip_special_tokens=True)
        outputs = classifier(batch["response"])
        rewards = [torch.tensor(-o["score"]) for o in outputs]
        stats = ppo_trainer.step(query_tensors, response_tensors, rewards)
        ppo_trainer.log_stats(stats, batch, rewards)
    model.save_pretrained("detox")


if __name__ == "__main__":
    main()
