import torch
from trl import GRPOConfig, GRPOTrainer
from transformers import AutoModelForCausalLM, set_seed


def respond_to_batch(model, queries, txt_len=20, top_k=0, top_p=1.0):
    """trl.core.respond_to_batch (removed in TRL 0.14), kept by trl-compat: sample exactly txt_len new tokens."""
    output = model.generate(
        queries, max_new_tokens=txt_len, min_new_tokens=txt_len, do_sample=True, top_k=top_k, top_p=top_p
    )
    return output[:, queries.shape[-1] :]


set_seed(0)
# TODO(trl-compat): learning_rate=1.41e-05 written, old default uncertain (pin trl) [ppo-to-grpo]
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted... [ppo-to-grpo]
# TODO(trl-compat): PPO scored 1 prompts x 1 response per step [ppo-to-grpo]
config = GRPOConfig(
    learning_rate=1.41e-5,
    seed=0,
    num_iterations=4,
    beta=0.2,
    report_to="none",
    max_grad_norm=0.0,
    gradient_checkpointing=False,
    bf16=False,
    per_device_train_batch_size=1,
    steps_per_generation=2,
    num_generations=2,
)
model = AutoModelForCausalLM.from_pretrained("gpt2")


def reward_fn(prompts, completions, **kwargs):
    """Reward for each completion (one float each): port the scoring code of the PPO loop here."""
    raise NotImplementedError("trl-compat: port the PPO reward computation into this function")


# TODO(trl-compat): GRPOTrainer takes no ref_model (dropped `model_ref`, and its... [ppo-to-grpo]
# TODO(trl-compat): write the reward: `reward_fn(prompts, completions, **kwargs)`... [ppo-to-grpo]
# TODO(trl-compat): GRPOTrainer needs a train_dataset with a `prompt` column [ppo-to-grpo]
ppo_trainer = GRPOTrainer(model=model, reward_funcs=reward_fn, args=config, processing_class=tokenizer)  # noqa: F821
query_tensor = tokenizer.encode("This morning I went to the ", return_tensors="pt")  # noqa: F821
response_tensor = respond_to_batch(model, query_tensor, txt_len=20)
reward = [torch.tensor(1.0)]
# TODO(trl-compat): ppo_trainer.step() does not exist on GRPOTrainer [ppo-to-grpo]
train_stats = ppo_trainer.step([query_tensor[0]], [response_tensor[0]], reward)
