import trl
from trl import GRPOConfig, GRPOTrainer
import numpy


class LengthSampler:
    """trl.core.LengthSampler (removed in TRL 0.25), kept by trl-compat: a random length in [min_value, max_value)."""

    def __init__(self, min_value, max_value):
        self.values = list(range(min_value, max_value))

    def __call__(self):
        return numpy.random.choice(self.values)


# TODO(trl-compat): learning_rate=3e-06 written, old default uncertain (pin trl) [ppo-to-grpo]
# TODO(trl-compat): beta=0.05 carries PPO's kl_coef, but PPO subtracted kl_coef*KL... [ppo-to-grpo]
config = GRPOConfig(
    output_dir="o",
    per_device_train_batch_size=4,
    learning_rate=3e-6,
    temperature=0.7,
    max_completion_length=53,
    num_iterations=4,
    beta=0.05,
    num_generations=2,
)
# trl-compat: GRPO and Online DPO read text prompts; rebuild them from the PPO-era input_ids
if "prompt" not in ds.column_names:
    ds = ds.with_format(None).map(
        lambda example: {"prompt": tok.decode(example["input_ids"], skip_special_tokens=True)},
        remove_columns=[c for c in ("input_ids", "attention_mask") if c in ds.column_names],
    )

# TODO(trl-compat): the value model `vm` is no longer used [ppo-to-grpo]
trainer = GRPOTrainer(
    model=m,
    reward_funcs=rm,  # noqa: F821
    args=config,
    train_dataset=ds,
    processing_class=tok,
    reward_processing_classes=tok,
)  # noqa: F821
sampler = LengthSampler(2, 6)
