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
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted... [ppo-to-grpo]
# TODO(trl-compat): PPO scored 256 prompts x 1 response per step [ppo-to-grpo]
config = GRPOConfig(
    learning_rate=1.41e-5,
    report_to="none",
    seed=0,
    num_iterations=4,
    beta=0.2,
    max_grad_norm=0.0,
    gradient_checkpointing=False,
    bf16=False,
    num_train_epochs=1,
    top_k=0,
    top_p=1.0,
    max_completion_length=15,
    per_device_train_batch_size=16,
    steps_per_generation=16,
    num_generations=8,
)
model = AutoModelForCausalLM.from_pretrained("lvwerra/gpt2-imdb")


def reward_fn(prompts, completions, **kwargs):
    """Reward function built by trl-compat from the PPO loop's scoring code."""
    texts = [q + r for q, r in zip(prompts, completions)]
    pipe_outputs = sentiment_pipe(texts, **sent_kwargs)  # noqa: F821
    rewards = [torch.tensor(output[1]["score"]) for output in pipe_outputs]
    return [float(r) for r in rewards]


# trl-compat: GRPO and Online DPO read text prompts; rebuild them from the PPO-era input_ids
if "prompt" not in dataset.column_names:
    dataset = dataset.with_format(None).map(
        lambda example: {"prompt": tokenizer.decode(example["input_ids"], skip_special_tokens=True)},
        remove_columns=[c for c in ("input_ids", "attention_mask") if c in dataset.column_names],
    )

# TODO(trl-compat): the PPO data_collator `collator` was dropped [ppo-to-grpo]
ppo_trainer = GRPOTrainer(
    model=model,
    reward_funcs=reward_fn,
    args=config,
    train_dataset=dataset,
    processing_class=tokenizer,
)  # noqa: F821
gen_kwargs = {"min_length": -1, "top_k": 0.0, "top_p": 1.0, "do_sample": True, "pad_token_id": tokenizer.eos_token_id}  # noqa: F821
output_length_sampler = LengthSampler(4, 16)

# TODO(trl-compat): the PPO step loop was replaced by ppo_trainer.train() [ppo-to-grpo]
ppo_trainer.train()
