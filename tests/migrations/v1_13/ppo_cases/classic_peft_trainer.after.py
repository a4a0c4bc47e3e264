import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoTokenizer, AutoModelForCausalLM
from trl import GRPOConfig, GRPOTrainer
import numpy


class LengthSampler:
    """trl.core.LengthSampler (removed in TRL 0.25), kept by trl-compat: a random length in [min_value, max_value)."""

    def __init__(self, min_value, max_value):
        self.values = list(range(min_value, max_value))

    def __call__(self):
        return numpy.random.choice(self.values)


# TODO(trl-compat): PPO config fields with no GRPO successor were removed [ppo-to-grpo]
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted... [ppo-to-grpo]
# TODO(trl-compat): PPO scored 16 prompts x 1 response per step [ppo-to-grpo]
config = GRPOConfig(
    learning_rate=1.4e-5,
    seed=0,
    num_iterations=4,
    beta=0.2,
    report_to="none",
    max_grad_norm=0.0,
    gradient_checkpointing=False,
    bf16=True,
    num_train_epochs=1,
    max_completion_length=32,
    top_p=0.95,
    gradient_accumulation_steps=1,
    per_device_train_batch_size=16,
    num_generations=8,
)
lora_config = LoraConfig(r=16, lora_alpha=32, task_type="CAUSAL_LM")
model = get_peft_model(AutoModelForCausalLM.from_pretrained("facebook/opt-350m"), lora_config)
tokenizer = AutoTokenizer.from_pretrained("facebook/opt-350m")


def reward_fn(prompts, completions, **kwargs):
    """Reward function built by trl-compat from the PPO loop's scoring code."""
    texts = [q + r for q, r in zip(prompts, completions)]
    rewards = [torch.tensor(-abs(len(t) - 200) / 200.0) for t in texts]
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
output_length_sampler = LengthSampler(8, 33)

# TODO(trl-compat): the PPO step loop was replaced by ppo_trainer.train() [ppo-to-grpo]
ppo_trainer.train()
