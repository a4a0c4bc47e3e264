from transformers import AutoModelForCausalLM
from trl.experimental.online_dpo import OnlineDPOConfig, OnlineDPOTrainer

# TODO(trl-compat): PPO config fields with no Online DPO successor were removed [ppo-to-grpo]
# TODO(trl-compat): learning_rate=3e-06 written, old default uncertain (pin trl) [ppo-to-grpo]
config = OnlineDPOConfig(output_dir="o", temperature=0.9, learning_rate=3e-6, max_new_tokens=53)
policy = AutoModelForCausalLM.from_pretrained("Qwen/Qwen3-0.6B")
# trl-compat: GRPO and Online DPO read text prompts; rebuild them from the PPO-era input_ids
if "prompt" not in ds.column_names:
    ds = ds.with_format(None).map(
        lambda example: {"prompt": tok.decode(example["input_ids"], skip_special_tokens=True)},
        remove_columns=[c for c in ("input_ids", "attention_mask") if c in ds.column_names],
    )

# TODO(trl-compat): the value model `vm` is no longer used (Online DPO has no critic) [ppo-to-grpo]
trainer = OnlineDPOTrainer(
    model=policy,
    reward_funcs=rm,
    args=config,
    train_dataset=ds,
    processing_class=tok,
    reward_processing_classes=tok,
)  # noqa: F821
