import torch
from transformers import AutoTokenizer, pipeline, AutoModelForCausalLM
from trl.experimental.online_dpo import OnlineDPOConfig, OnlineDPOTrainer

# TODO(trl-compat): PPO config fields with no Online DPO successor were removed [ppo-to-grpo]
# TODO(trl-compat): Online DPO's beta is the DPO inverse temperature [ppo-to-grpo]
config = OnlineDPOConfig(
    learning_rate=1.41e-5,
    seed=0,
    report_to="none",
    max_grad_norm=0.0,
    gradient_checkpointing=False,
    bf16=False,
    num_train_epochs=1,
    max_new_tokens=24,
    per_device_train_batch_size=4,
    gradient_accumulation_steps=2,
)
tokenizer = AutoTokenizer.from_pretrained("gpt2")
model = AutoModelForCausalLM.from_pretrained("gpt2")
ref_model = AutoModelForCausalLM.from_pretrained("gpt2")


def reward_fn(prompts, completions, **kwargs):
    """Reward function built by trl-compat from the PPO loop's scoring code."""
    pipe_outputs = sentiment_pipe(completions)
    rewards = [torch.tensor(o["score"]) for o in pipe_outputs]
    return [float(r) for r in rewards]


# trl-compat: GRPO and Online DPO read text prompts; rebuild them from the PPO-era input_ids
if "prompt" not in dataset.column_names:
    dataset = dataset.with_format(None).map(
        lambda example: {"prompt": tokenizer.decode(example["input_ids"], skip_special_tokens=True)},
        remove_columns=[c for c in ("input_ids", "attention_mask") if c in dataset.column_names],
    )

ppo_trainer = OnlineDPOTrainer(
    model=model,
    ref_model=ref_model,
    reward_funcs=reward_fn,
    args=config,
    train_dataset=dataset,
    processing_class=tokenizer,
)  # noqa: F821
sentiment_pipe = pipeline("sentiment-analysis", model="lvwerra/distilbert-imdb")

# TODO(trl-compat): the PPO step loop was replaced by ppo_trainer.train() [ppo-to-grpo]
ppo_trainer.train()
