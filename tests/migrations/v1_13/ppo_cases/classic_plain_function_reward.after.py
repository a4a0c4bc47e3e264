from transformers import AutoTokenizer, AutoModelForCausalLM
from trl import GRPOConfig, GRPOTrainer


def length_reward(texts):
    return [float(len(t.split())) for t in texts]


# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted... [ppo-to-grpo]
# TODO(trl-compat): PPO scored 4 prompts x 1 response per step [ppo-to-grpo]
config = GRPOConfig(
    learning_rate=3e-6,
    seed=7,
    num_iterations=4,
    beta=0.2,
    report_to="none",
    max_grad_norm=0.0,
    gradient_checkpointing=False,
    bf16=False,
    num_train_epochs=1,
    max_completion_length=16,
    top_k=0,
    top_p=0.9,
    gradient_accumulation_steps=1,
    per_device_train_batch_size=2,
    steps_per_generation=2,
    num_generations=2,
)
tokenizer = AutoTokenizer.from_pretrained("gpt2")
model = AutoModelForCausalLM.from_pretrained("gpt2")


def reward_fn(prompts, completions, **kwargs):
    """Reward function built by trl-compat from the PPO loop's scoring code."""
    rewards = length_reward(completions)
    return [float(r) for r in rewards]


# TODO(trl-compat): GRPOTrainer reads a `prompt` column (text or chat messages) [ppo-to-grpo]
trainer = GRPOTrainer(
    model=model,
    reward_funcs=reward_fn,
    args=config,
    train_dataset=make_dataset(),
    processing_class=tokenizer,
)  # noqa: F821

# TODO(trl-compat): the PPO step loop was replaced by trainer.train() [ppo-to-grpo]
trainer.train()
