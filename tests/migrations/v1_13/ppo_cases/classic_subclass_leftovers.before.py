import torch
from trl import PPOConfig, PPOTrainer


class RLTrainer(PPOTrainer):
    def __init__(self, config, model, ref_model, tokenizer, dataset, reward_model):
        PPOTrainer.__init__(self, config=config, model=model, ref_model=ref_model, tokenizer=tokenizer,
                            dataset=dataset)
        self.reward_model = reward_model

    def run(self):
        for batch in self.dataloader:
            responses = self.generate(batch["input_ids"], max_new_tokens=32)
            rewards = [self.reward_model(r) for r in responses]
            stats = self.step(batch["input_ids"], responses, rewards)
            self.log_stats(stats, batch, rewards)


def evaluate(t, batches):
    for batch in batches:
        stats = t.step(batch["q"], batch["r"], [torch.tensor(0.0)])
    return t.dataloader, stats


config = PPOConfig(batch_size=8, mini_batch_size=8)
trainer = RLTrainer(config, model, None, tokenizer, dataset, reward_model)
trainer.run()
evaluate(trainer, [])
