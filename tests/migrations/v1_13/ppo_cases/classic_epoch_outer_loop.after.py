import torch
from trl import GRPOConfig, GRPOTrainer
from transformers import AutoModelForCausalLM
import numpy


class LengthSampler:
    """trl.core.LengthSampler (removed in TRL 0.25), kept by trl-compat: a random length in [min_value, max_value)."""

    def __init__(self, min_value, max_value):
        self.values = list(range(min_value, max_value))

    def __call__(self):
        return numpy.random.choice(self.values)


# TODO(trl-compat): PPO config fields with no GRPO successor were removed [ppo-to-grpo]
# TODO(trl-compat): learning_rate=1.41e-05 written, old default uncertain (pin trl) [ppo-to-grpo]
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted... [ppo-to-grpo]
# TODO(trl-compat): PPO scored 6 prompts x 1 response per step [ppo-to-grpo]
config = GRPOConfig(
    num_iterations=1,
    epsilon=0.1,
    learning_rate=1.41e-5,
    seed=0,
    beta=0.2,
    report_to="none",
    max_grad_norm=0.0,
    gradient_checkpointing=False,
    bf16=False,
    num_train_epochs=3,
    max_completion_length=9,
    per_device_train_batch_size=3,
    steps_per_generation=2,
    num_generations=3,
)
model = AutoModelForCausalLM.from_pretrained("gpt2")


def reward_fn(prompts, completions, **kwargs):
    """Reward function built by trl-compat from the PPO loop's scoring code."""
    rewards = [torch.tensor(1.0) if "good" in r else torch.tensor(0.0) for r in completions]
    return [float(r) for r in rewards]


# trl-compat: GRPO and Online DPO read text prompts; rebuild them from the PPO-era input_ids
if "prompt" not in dataset.column_names:
    dataset = dataset.with_format(None).map(
        lambda example: {"prompt": tokenizer.decode(example["input_ids"], skip_special_tokens=True)},
        remove_columns=[c for c in ("input_ids", "attention_mask") if c in dataset.column_names],
    )

ppo_trainer = GRPOTrainer(
    model=model,
    reward_funcs=reward_fn,
    args=config,
    train_dataset=dataset,
    processing_class=tokenizer,
)  # noqa: F821
output_length_sampler = LengthSampler(4, 10)

# TODO(trl-compat): the PPO step loop was replaced by ppo_trainer.train() [ppo-to-grpo]
ppo_trainer.train()
