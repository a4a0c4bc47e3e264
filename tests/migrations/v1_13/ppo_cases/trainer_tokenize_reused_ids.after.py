from trl import GRPOConfig, GRPOTrainer

# TODO(trl-compat): beta=0.05 carries PPO's kl_coef, but PPO subtracted kl_coef*KL... [ppo-to-grpo]
config = GRPOConfig(
    output_dir="o",
    per_device_train_batch_size=8,
    learning_rate=5e-5,
    temperature=0.7,
    max_completion_length=53,
    num_iterations=4,
    beta=0.05,
    num_generations=4,
)


def tokenize(element):
    input_ids = tokenizer.apply_chat_template(
        element["messages"][:1],
        add_generation_prompt=True,
        return_dict=False,
    )  # noqa: F821
    return {"input_ids": input_ids, "lengths": len(input_ids)}


train_dataset = raw.map(tokenize, remove_columns=raw.column_names)  # noqa: F821
train_dataset = train_dataset.filter(lambda x: len(x["input_ids"]) <= 512)
# trl-compat: GRPO and Online DPO read text prompts; rebuild them from the PPO-era input_ids
# TODO(trl-compat): prompt ids built by apply_chat_template [ppo-to-grpo]
if "prompt" not in train_dataset.column_names:
    train_dataset = train_dataset.with_format(None).map(
        lambda example: {"prompt": tokenizer.decode(example["input_ids"], skip_special_tokens=False)},
        remove_columns=[c for c in ("input_ids", "attention_mask") if c in train_dataset.column_names],
    )

# TODO(trl-compat): the value model `vm` is no longer used [ppo-to-grpo]
trainer = GRPOTrainer(
    model=policy,
    reward_funcs=rm,
    args=config,
    train_dataset=train_dataset,
    processing_class=tokenizer,
    reward_processing_classes=tokenizer,
)  # noqa: F821
trainer.train()
