import torch
from datasets import load_dataset
from transformers import AutoTokenizer, pipeline, AutoModelForCausalLM

from trl import GRPOConfig, GRPOTrainer

# TODO(trl-compat): PPO config fields with no GRPO successor were removed [ppo-to-grpo]
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted... [ppo-to-grpo]
# TODO(trl-compat): PPO scored 8 prompts x 1 response per step [ppo-to-grpo]
config = GRPOConfig(
    learning_rate=1e-5,
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
    max_completion_length=20,
    per_device_train_batch_size=4,
    steps_per_generation=2,
    num_generations=4,
)
tokenizer = AutoTokenizer.from_pretrained("gpt2")
tokenizer.pad_token = tokenizer.eos_token


def tokenize(sample):
    sample["input_ids"] = tokenizer.encode(sample["text"])[:8]
    sample["query"] = tokenizer.decode(sample["input_ids"])
    return sample


dataset = load_dataset("imdb", split="train").map(tokenize)
dataset.set_format(type="torch")
model = AutoModelForCausalLM.from_pretrained("gpt2")


def reward_fn(prompts, completions, **kwargs):
    """Reward function built by trl-compat from the PPO loop's scoring code."""
    texts = [q + r for q, r in zip(prompts, completions)]
    pipe_outputs = sentiment_pipe(texts, top_k=None, function_to_apply="none")
    rewards = [torch.tensor(output[1]["score"]) for output in pipe_outputs]
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
)
sentiment_pipe = pipeline("sentiment-analysis", model="lvwerra/distilbert-imdb", device=ppo_trainer.accelerator.device)
generation_kwargs = {"min_length": -1, "top_k": 0.0, "top_p": 1.0, "do_sample": True, "max_new_tokens": 20}

# TODO(trl-compat): the PPO step loop was replaced by ppo_trainer.train() [ppo-to-grpo]
ppo_trainer.train()

# TODO(trl-compat): model.save_pretrained: the checkpoint no longer holds... [value-head-models]
model.save_pretrained("out")
