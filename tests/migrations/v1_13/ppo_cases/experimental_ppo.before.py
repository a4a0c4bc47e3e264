from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer
from trl.experimental.ppo import PPOConfig, PPOTrainer

training_args = PPOConfig(output_dir="qwen-ppo", per_device_train_batch_size=2, gradient_accumulation_steps=4,
                          num_ppo_epochs=1, kl_coef=0.01, response_length=128, dataset_num_proc=4)
tokenizer = AutoTokenizer.from_pretrained("Qwen/Qwen2.5-0.5B-Instruct", padding_side="left")


def tokenize(element):
    input_ids = tokenizer.apply_chat_template(element["messages"][:1], padding=False, add_generation_prompt=True)
    return {"input_ids": input_ids, "lengths": len(input_ids)}


train_dataset = load_dataset("trl-lib/ultrafeedback-prompt", split="train")  # noqa: F821
train_dataset = train_dataset.map(tokenize, remove_columns=train_dataset.column_names,
                                  num_proc=training_args.dataset_num_proc)
trainer = PPOTrainer(
    args=training_args,
    processing_class=tokenizer,
    model=AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B-Instruct"),
    ref_model=None,
    reward_model=AutoModelForSequenceClassification.from_pretrained("rm", num_labels=1),
    value_model=AutoModelForSequenceClassification.from_pretrained("rm", num_labels=1),
    train_dataset=train_dataset,
)
trainer.train()
