from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer
from trl import GRPOConfig
from trl import GRPOTrainer

# TODO(trl-compat): PPO config fields with no GRPO successor were removed [ppo-to-grpo]
# TODO(trl-compat): beta=0.05 carries PPO's kl_coef, but PPO subtracted kl_coef*KL... [ppo-to-grpo]
config = GRPOConfig(
    output_dir="out",
    per_device_train_batch_size=4,
    gradient_accumulation_steps=2,
    learning_rate=5e-5,
    temperature=0.7,
    max_completion_length=53,
    num_iterations=4,
    beta=0.05,
    num_generations=4,
)
tokenizer = AutoTokenizer.from_pretrained("EleutherAI/pythia-14m", padding_side="left")
policy = AutoModelForCausalLM.from_pretrained("EleutherAI/pythia-14m")
reward_model = AutoModelForSequenceClassification.from_pretrained("EleutherAI/pythia-14m", num_labels=1)
# trl-compat: GRPO and Online DPO read text prompts; rebuild them from the PPO-era input_ids
if "prompt" not in train_dataset.column_names:
    train_dataset = train_dataset.with_format(None).map(
        lambda example: {"prompt": tokenizer.decode(example["input_ids"], skip_special_tokens=True)},
        remove_columns=[c for c in ("input_ids", "attention_mask") if c in train_dataset.column_names],
    )

# TODO(trl-compat): GRPOTrainer takes no ref_model (dropped `ref_policy`, and its... [ppo-to-grpo]
trainer = GRPOTrainer(
    model=policy,
    reward_funcs=reward_model,
    args=config,
    train_dataset=train_dataset,
    processing_class=tokenizer,
    reward_processing_classes=tokenizer,
)  # noqa: F821
trainer.train()
