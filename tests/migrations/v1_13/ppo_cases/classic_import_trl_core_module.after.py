import trl
from transformers import set_seed


def respond_to_batch(model, queries, txt_len=20, top_k=0, top_p=1.0):
    """trl.core.respond_to_batch (removed in TRL 0.14), kept by trl-compat: sample exactly txt_len new tokens."""
    output = model.generate(
        queries, max_new_tokens=txt_len, min_new_tokens=txt_len, do_sample=True, top_k=top_k, top_p=top_p
    )
    return output[:, queries.shape[-1] :]


set_seed(1)
resp = respond_to_batch(model, queries, txt_len=8)  # noqa: F821
# TODO(trl-compat): learning_rate=1.41e-05 written, old default uncertain (pin trl) [ppo-to-grpo]
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted... [ppo-to-grpo]
# TODO(trl-compat): PPO scored 4 prompts x 1 response per step [ppo-to-grpo]
cfg = trl.GRPOConfig(
    learning_rate=1.41e-5,
    seed=0,
    num_iterations=4,
    beta=0.2,
    report_to="none",
    max_grad_norm=0.0,
    gradient_checkpointing=False,
    bf16=False,
    per_device_train_batch_size=4,
    num_generations=2,
)
