import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer, AutoModelForCausalLM

from trl import GRPOConfig, GRPOTrainer

# TODO(trl-compat): PPO config fields with no GRPO successor were removed [ppo-to-grpo]
# TODO(trl-compat): learning_rate=1.41e-05 written, old default uncertain (pin trl) [ppo-to-grpo]
# TODO(trl-compat): beta=0.05 carries PPO's init_kl_coef, but PPO subtracted... [ppo-to-grpo]
# TODO(trl-compat): PPO scored 16 prompts x 1 response per step [ppo-to-grpo]
config = GRPOConfig(
    num_iterations=2,
    beta=0.05,
    learning_rate=1.41e-5,
    seed=0,
    report_to="none",
    max_grad_norm=0.0,
    gradient_checkpointing=False,
    bf16=False,
    num_train_epochs=1,
    max_completion_length=32,
    per_device_train_batch_size=16,
    num_generations=8,
)
tokenizer = AutoTokenizer.from_pretrained("facebook/opt-125m")
model = AutoModelForCausalLM.from_pretrained("facebook/opt-125m")
reward_model = AutoModelForSequenceClassification.from_pretrained("OpenAssistant/reward-model-deberta-v3-base")
reward_tokenizer = AutoTokenizer.from_pretrained("OpenAssistant/reward-model-deberta-v3-base")
dataset = build_dataset(tokenizer)  # noqa: F821 - defined elsewhere in the user's project


def reward_fn(prompts, completions, **kwargs):
    """Reward function built by trl-compat from the PPO loop's scoring code."""
    inputs = reward_tokenizer(prompts, completions, return_tensors="pt", padding=True)
    with torch.no_grad():
        scores = reward_model(**inputs).logits[:, 0]
    rewards = [s for s in scores]
    return [float(r) for r in rewards]


# TODO(trl-compat): GRPOTrainer takes no ref_model (dropped `ref_model`, and its... [ppo-to-grpo]
# TODO(trl-compat): GRPOTrainer reads a `prompt` column [ppo-to-grpo]
# TODO(trl-compat): the PPO data_collator `collator` was dropped [ppo-to-grpo]
ppo_trainer = GRPOTrainer(
    model=model,
    reward_funcs=reward_fn,
    args=config,
    train_dataset=dataset,
    processing_class=tokenizer,
)  # noqa: F821
generation_kwargs = {"max_new_tokens": 32, "do_sample": True, "pad_token_id": tokenizer.eos_token_id}

# TODO(trl-compat): the PPO step loop was replaced by ppo_trainer.train() [ppo-to-grpo]
ppo_trainer.train()

ppo_trainer.save_model("opt-ppo")
