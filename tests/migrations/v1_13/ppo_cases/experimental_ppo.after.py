from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer
from trl import GRPOConfig, GRPOTrainer

# TODO(trl-compat): PPO config fields with no GRPO successor were removed [ppo-to-grpo]
# TODO(trl-compat): learning_rate=3e-06 written, old default uncertain (pin trl) [ppo-to-grpo]
# TODO(trl-compat): beta=0.01 carries PPO's kl_coef, but PPO subtracted kl_coef*KL... [ppo-to-grpo]
training_args = GRPOConfig(
    output_dir="qwen-ppo",
    per_device_train_batch_size=2,
    gradient_accumulation_steps=4,
    num_iterations=1,
    beta=0.01,
    max_completion_length=128,
    learning_rate=3e-6,
    temperature=0.7,
    num_generations=4,
)
tokenizer = AutoTokenizer.from_pretrained("Qwen/Qwen2.5-0.5B-Instruct", padding_side="left")


def tokenize(element):
    # trl-compat: GRPO/Online DPO tokenize prompts themselves: keep the text (was input_ids)
    return {"prompt": element["messages"][:1]}


train_dataset = load_dataset("trl-lib/ultrafeedback-prompt", split="train")  # noqa: F821
train_dataset = train_dataset.map(tokenize, remove_columns=train_dataset.column_names,
                                  num_proc=4)
# TODO(trl-compat): the value model... [ppo-to-grpo]
trainer = GRPOTrainer(
    model=AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B-Instruct"),
    reward_funcs=AutoModelForSequenceClassification.from_pretrained("rm", num_labels=1),
    args=training_args,
    train_dataset=train_dataset,
    processing_class=tokenizer,
    reward_processing_classes=tokenizer,
)
trainer.train()
