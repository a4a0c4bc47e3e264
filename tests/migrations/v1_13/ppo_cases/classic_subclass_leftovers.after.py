import torch
from trl import GRPOConfig, GRPOTrainer


class RLTrainer(GRPOTrainer):
    def __init__(self, config, model, ref_model, tokenizer, dataset, reward_model):
        # TODO(trl-compat): GRPOTrainer.__init__ takes args= not config=... [ppo-to-grpo]
        GRPOTrainer.__init__(self, config=config, model=model, ref_model=ref_model, tokenizer=tokenizer,
                            dataset=dataset)
        self.reward_model = reward_model

    def run(self):
        # TODO(trl-compat): self.dataloader does not exist on GRPOTrainer [ppo-to-grpo]
        for batch in self.dataloader:
            # TODO(trl-compat): self.generate() does not exist on GRPOTrainer [ppo-to-grpo]
            responses = self.generate(batch["input_ids"], max_new_tokens=32)
            rewards = [self.reward_model(r) for r in responses]
            # TODO(trl-compat): self.step() does not exist on GRPOTrainer [ppo-to-grpo]
            stats = self.step(batch["input_ids"], responses, rewards)
            # TODO(trl-compat): self.log_stats() does not exist on GRPOTrainer [ppo-to-grpo]
            self.log_stats(stats, batch, rewards)


def evaluate(t, batches):
    for batch in batches:
        # TODO(trl-compat): t.step() does not exist on GRPOTrainer [ppo-to-grpo]
        stats = t.step(batch["q"], batch["r"], [torch.tensor(0.0)])
    # TODO(trl-compat): t.dataloader does not exist on GRPOTrainer [ppo-to-grpo]
    return t.dataloader, stats


# TODO(trl-compat): learning_rate=1.41e-05 written, old default uncertain (pin trl) [ppo-to-grpo]
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted... [ppo-to-grpo]
# TODO(trl-compat): PPO scored 8 prompts x 1 response per step [ppo-to-grpo]
config = GRPOConfig(
    learning_rate=1.41e-5,
    seed=0,
    num_iterations=4,
    beta=0.2,
    report_to="none",
    max_grad_norm=0.0,
    gradient_checkpointing=False,
    bf16=False,
    per_device_train_batch_size=8,
    num_generations=4,
)
# TODO(trl-compat): this PPO trainer subclass defines its own __init__ [ppo-to-grpo]
trainer = RLTrainer(config, model, None, tokenizer, dataset, reward_model)
trainer.run()
evaluate(trainer, [])
