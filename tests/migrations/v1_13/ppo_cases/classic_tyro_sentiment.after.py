# shape of TRL v0.7-v0.11 examples/scripts/ppo.py (tyro + dataclass holding the PPOConfig)
from dataclasses import dataclass, field
from typing import Optional

import torch
import tyro
from datasets import load_dataset
from peft import LoraConfig, get_peft_model
from transformers import AutoTokenizer, pipeline, AutoModelForCausalLM, set_seed

from trl import GRPOConfig, GRPOTrainer
import numpy


class LengthSampler:
    """trl.core.LengthSampler (removed in TRL 0.25), kept by trl-compat: a random length in [min_value, max_value)."""

    def __init__(self, min_value, max_value):
        self.values = list(range(min_value, max_value))

    def __call__(self):
        return numpy.random.choice(self.values)


@dataclass
class ScriptArguments:
    # TODO(trl-compat): PPO config fields with no GRPO successor were removed [ppo-to-grpo]
    # TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted... [ppo-to-grpo]
    # TODO(trl-compat): PPO scored 128 prompts x 1 response per step [ppo-to-grpo]
    ppo_config: GRPOConfig = field(
        default_factory=lambda: GRPOConfig(
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
            max_completion_length=32,
            gradient_accumulation_steps=1,
            per_device_train_batch_size=128,
            num_generations=8,
        )
    )
    use_peft: bool = False
    peft_config: Optional[LoraConfig] = field(default_factory=lambda: LoraConfig(r=16, lora_alpha=16))


args = tyro.cli(ScriptArguments)
sent_kwargs = {"return_all_scores": True, "function_to_apply": "none", "batch_size": 16}
trl_model_class = AutoModelForCausalLM


def build_dataset(config, query_dataset, input_min_text_length=2, input_max_text_length=8):
    tokenizer = AutoTokenizer.from_pretrained("lvwerra/gpt2-imdb")
    tokenizer.pad_token = tokenizer.eos_token
    ds = load_dataset(query_dataset, split="train")
    ds = ds.rename_columns({"text": "review"})
    input_size = LengthSampler(input_min_text_length, input_max_text_length)

    def tokenize(sample):
        sample["input_ids"] = tokenizer.encode(sample["review"])[: input_size()]
        sample["query"] = tokenizer.decode(sample["input_ids"])
        return sample

    ds = ds.map(tokenize, batched=False)
    ds.set_format(type="torch")
    return ds


dataset = build_dataset(args.ppo_config, "imdb")


def collator(data):
    return {key: [d[key] for d in data] for key in data[0]}


set_seed(args.ppo_config.seed)
model = get_peft_model(trl_model_class.from_pretrained("lvwerra/gpt2-imdb"), args.peft_config) if args.use_peft else trl_model_class.from_pretrained("lvwerra/gpt2-imdb")
tokenizer = AutoTokenizer.from_pretrained("lvwerra/gpt2-imdb")
tokenizer.pad_token_id = tokenizer.eos_token_id


def reward_fn(prompts, completions, **kwargs):
    """Reward function built by trl-compat from the PPO loop's scoring code."""
    texts = [q + r for q, r in zip(prompts, completions)]
    pipe_outputs = sentiment_pipe(texts, **sent_kwargs)
    rewards = [torch.tensor(output[1]["score"]) for output in pipe_outputs]
    return [float(r) for r in rewards]


# trl-compat: GRPO and Online DPO read text prompts; rebuild them from the PPO-era input_ids
if "prompt" not in dataset.column_names:
    dataset = dataset.with_format(None).map(
        lambda example: {"prompt": tokenizer.decode(example["input_ids"], skip_special_tokens=True)},
        remove_columns=[c for c in ("input_ids", "attention_mask") if c in dataset.column_names],
    )

# TODO(trl-compat): GRPOTrainer takes no ref_model (dropped `ref_model`, and its... [ppo-to-grpo]
# TODO(trl-compat): the PPO data_collator `collator` was dropped [ppo-to-grpo]
ppo_trainer = GRPOTrainer(
    model=model,
    reward_funcs=reward_fn,
    args=args.ppo_config,
    train_dataset=dataset,
    processing_class=tokenizer,
)

device = ppo_trainer.accelerator.device
task, model_name = "sentiment-analysis:lvwerra/distilbert-imdb".split(":")
sentiment_pipe = pipeline(task, model=model_name, device=device)
generation_kwargs = {"min_length": -1, "top_k": 0.0, "top_p": 1.0, "do_sample": True, "pad_token_id": tokenizer.eos_token_id, "max_new_tokens": 32}

# TODO(trl-compat): the PPO step loop was replaced by ppo_trainer.train() [ppo-to-grpo]
ppo_trainer.train()
