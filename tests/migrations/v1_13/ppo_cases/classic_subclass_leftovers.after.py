import torch
from trl import GRPOConfig, GRPOTrainer


class RLTrainer(GRPOTrainer):
    def __init__(self, config, model, ref_model, tokenizer, dataset, reward_model):
        # TODO(trl-compat): RLTrainer.__init__ calls the PPO trainer's constructor: GRPOTrainer.__init__ takes (model, reward_funcs, args, train_dataset, eval_dataset, processing_class, ..., peft_config); no ref_model/value_model/reward_model/tokenizer/dataset (see MIGRATION.md#ppo-subclasses)
        GRPOTrainer.__init__(self, config=config, model=model, ref_model=ref_model, tokenizer=tokenizer,
                            dataset=dataset)
        self.reward_model = reward_model

    def run(self):
        # TODO(trl-compat): self.dataloader does not exist on GRPOTrainer (the base class now) (see MIGRATION.md#ppo-subclasses)
        for batch in self.dataloader:
            # TODO(trl-compat): self.generate() does not exist on GRPOTrainer (the base class now) (see MIGRATION.md#ppo-subclasses)
            responses = self.generate(batch["input_ids"], max_new_tokens=32)
            rewards = [self.reward_model(r) for r in responses]
            # TODO(trl-compat): self.step() does not exist on GRPOTrainer (the base class now) (see MIGRATION.md#ppo-subclasses)
            stats = self.step(batch["input_ids"], responses, rewards)
            # TODO(trl-compat): self.log_stats() does not exist on GRPOTrainer (the base class now) (see MIGRATION.md#ppo-subclasses)
            self.log_stats(stats, batch, rewards)


def evaluate(t, batches):
    for batch in batches:
        # TODO(trl-compat): t.step() does not exist on GRPOTrainer: training, generation and logging happen inside trainer.train() (see MIGRATION.md#ppo-trainer-attributes)
        stats = t.step(batch["q"], batch["r"], [torch.tensor(0.0)])
    # TODO(trl-compat): t.dataloader does not exist on GRPOTrainer (see MIGRATION.md#ppo-trainer-attributes)
    return t.dataloader, stats


# TODO(trl-compat): learning_rate was not set: its default differs across the TRL releases this file could run on (1e-05 in 0.4.0..0.7.10; 1.41e-05 in 0.7.11..0.11.4): pin trl; 1.41e-05 written (see MIGRATION.md#ppo-config-fields)
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted kl_coef*KL from the reward per token (classic: adaptive controller) while GRPO adds beta*KL(k3) to the loss; with beta != 0 and no PEFT, GRPO reloads the reference model from model.config._name_or_path (no ref_model argument). Tune beta (GRPO default 0.0 = no reference model) (see MIGRATION.md#ppo-kl-beta)
# TODO(trl-compat): PPO scored 8 prompts x 1 response per step; GRPO now samples 2 prompt(s) x 4 completions per generation batch of 8 (num_generations must divide it). Adjust num_generations / steps_per_generation if you want more prompts per step (see MIGRATION.md#ppo-batch-size)
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
# TODO(trl-compat): this PPO trainer subclass defines its own __init__: check the arguments passed here against GRPOTrainer (see MIGRATION.md#ppo-subclasses)
trainer = RLTrainer(config, model, None, tokenizer, dataset, reward_model)
trainer.run()
evaluate(trainer, [])
