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
# TODO(trl-compat): learning_rate was not set: its default differs across the TRL releases this file could run on (1e-05 in 0.4.0..0.7.10; 1.41e-05 in 0.7.11..0.11.4): pin trl; 1.41e-05 written (see MIGRATION.md#ppo-config-fields)
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted kl_coef*KL from the reward per token (classic: adaptive controller) while GRPO adds beta*KL(k3) to the loss; with beta != 0 and no PEFT, GRPO reloads the reference model from model.config._name_or_path (no ref_model argument). Tune beta (GRPO default 0.0 = no reference model) (see MIGRATION.md#ppo-kl-beta)
# TODO(trl-compat): PPO scored 4 prompts x 1 response per step; GRPO now samples 2 prompt(s) x 2 completions per generation batch of 4 (num_generations must divide it). Adjust num_generations / steps_per_generation if you want more prompts per step (see MIGRATION.md#ppo-batch-size)
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
