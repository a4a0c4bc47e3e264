from trl import PPOConfig, PPOTrainer

config = PPOConfig(output_dir="o", per_device_train_batch_size=8)


def tokenize(element):
    input_ids = tokenizer.apply_chat_template(element["messages"][:1], add_generation_prompt=True)  # noqa: F821
    return {"input_ids": input_ids, "lengths": len(input_ids)}


train_dataset = raw.map(tokenize, remove_columns=raw.column_names)  # noqa: F821
train_dataset = train_dataset.filter(lambda x: len(x["input_ids"]) <= 512)
trainer = PPOTrainer(args=config, processing_class=tokenizer, model=policy, ref_model=None,  # noqa: F821
                     reward_model=rm, value_model=vm, train_dataset=train_dataset)  # noqa: F821
trainer.train()
