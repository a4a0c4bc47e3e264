from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer
from trl import PPOConfig, PPOTrainer

training_args = PPOConfig(output_dir="o", per_device_train_batch_size=4, num_ppo_epochs=1)
tokenizer = AutoTokenizer.from_pretrained("EleutherAI/pythia-14m", padding_side="left")
policy = AutoModelForCausalLM.from_pretrained("EleutherAI/pythia-14m")
reward_model = AutoModelForSequenceClassification.from_pretrained("EleutherAI/pythia-14m", num_labels=1)
value_model = AutoModelForSequenceClassification.from_pretrained("EleutherAI/pythia-14m", num_labels=1)
dataset = load_dataset("trl-internal-testing/descriptiveness-sentiment-trl-style", split="descriptiveness")
train_dataset = dataset.select(range(len(dataset) - 100))
eval_dataset = dataset.select(range(len(dataset) - 100, len(dataset)))
dataset_text_field = "prompt"


def prepare_dataset(dataset, tokenizer):
    """pre-tokenize the dataset before training; only collate during training"""

    def tokenize(element):
        outputs = tokenizer(element[dataset_text_field], padding=False)
        return {"input_ids": outputs["input_ids"]}

    return dataset.map(tokenize, batched=True, remove_columns=dataset.column_names)


train_dataset = prepare_dataset(train_dataset, tokenizer)
eval_dataset = prepare_dataset(eval_dataset, tokenizer)
trainer = PPOTrainer(
    args=training_args,
    processing_class=tokenizer,
    model=policy,
    ref_model=None,
    reward_model=reward_model,
    value_model=value_model,
    train_dataset=train_dataset,
    eval_dataset=eval_dataset,
)
trainer.train()
