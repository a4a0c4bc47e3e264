from peft import LoraConfig
from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer
from trl import GRPOConfig, GRPOTrainer

# TODO(trl-compat): PPO config fields with no GRPO successor were removed [ppo-to-grpo]
# TODO(trl-compat): missing_eos_penalty=1.0 has no GRPO field [ppo-to-grpo]
# TODO(trl-compat): beta=0.05 carries PPO's kl_coef, but PPO subtracted kl_coef*KL... [ppo-to-grpo]
training_args = GRPOConfig(
    output_dir="pythia-ppo",
    learning_rate=3e-6,
    per_device_train_batch_size=16,
    gradient_accumulation_steps=1,
    run_name="ppo-exp",
    temperature=0.7,
    max_completion_length=53,
    num_iterations=4,
    beta=0.05,
    num_generations=8,
)
tokenizer = AutoTokenizer.from_pretrained("EleutherAI/pythia-1b-deduped", padding_side="left")
policy = AutoModelForCausalLM.from_pretrained("EleutherAI/pythia-1b-deduped")
reward_model = AutoModelForSequenceClassification.from_pretrained("my-rm", num_labels=1)
value_model = AutoModelForSequenceClassification.from_pretrained("my-rm", num_labels=1)
peft_config = LoraConfig(r=8, task_type="CAUSAL_LM")
# trl-compat: GRPO and Online DPO read text prompts; rebuild them from the PPO-era input_ids
if "prompt" not in train_dataset.column_names:
    train_dataset = train_dataset.with_format(None).map(
        lambda example: {"prompt": tokenizer.decode(example["input_ids"], skip_special_tokens=True)},
        remove_columns=[c for c in ("input_ids", "attention_mask") if c in train_dataset.column_names],
    )

# TODO(trl-compat): the value model `value_model` is no longer used [ppo-to-grpo]
trainer = GRPOTrainer(
    model=policy,
    reward_funcs=reward_model,
    args=training_args,
    train_dataset=train_dataset,  # noqa: F821
    processing_class=tokenizer,
    reward_processing_classes=tokenizer,
    peft_config=peft_config,
)
trainer.train()
trainer.save_model(training_args.output_dir)
