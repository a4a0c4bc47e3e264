from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer
from trl import GRPOConfig
from trl import GRPOTrainer

# TODO(trl-compat): PPO config fields with no GRPO successor were removed: total_episodes=1000 (no field; training length is num_train_epochs / max_steps) (see MIGRATION.md#ppo-config-fields)
# TODO(trl-compat): beta=0.05 carries PPO's kl_coef, but PPO subtracted kl_coef*KL from the reward per token (classic: adaptive controller) while GRPO adds beta*KL(k3) to the loss; with beta != 0 and no PEFT, GRPO reloads the reference model from model.config._name_or_path (no ref_model argument). Tune beta (GRPO default 0.0 = no reference model) (see MIGRATION.md#ppo-kl-beta)
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

# TODO(trl-compat): GRPOTrainer takes no ref_model (dropped `ref_policy`, and its construction): with beta != 0 and no PEFT it reloads the reference from model.config._name_or_path, so the policy must be loadable from that path; with beta=0.0 there is no reference model at all (see MIGRATION.md#ppo-ref-model)
trainer = GRPOTrainer(
    model=policy,
    reward_funcs=reward_model,
    args=config,
    train_dataset=train_dataset,
    processing_class=tokenizer,
    reward_processing_classes=tokenizer,
)  # noqa: F821
trainer.train()
