from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer
from trl import GRPOConfig, GRPOTrainer

# TODO(trl-compat): beta=0.05 carries PPO's kl_coef, but PPO subtracted kl_coef*KL... [ppo-to-grpo]
training_args = GRPOConfig(
    output_dir="o",
    per_device_train_batch_size=4,
    num_iterations=1,
    learning_rate=5e-5,
    temperature=0.7,
    max_completion_length=53,
    beta=0.05,
    num_generations=2,
)
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
        # trl-compat: GRPO/Online DPO tokenize prompts themselves: keep the text (was input_ids)
        return {"prompt": element[dataset_text_field]}

    return dataset.map(tokenize, batched=True, remove_columns=dataset.column_names)


train_dataset = prepare_dataset(train_dataset, tokenizer)
eval_dataset = prepare_dataset(eval_dataset, tokenizer)
# TODO(trl-compat): the value model `value_model` is no longer used [ppo-to-grpo]
trainer = GRPOTrainer(
    model=policy,
    reward_funcs=reward_model,
    args=training_args,
    train_dataset=train_dataset,
    eval_dataset=eval_dataset,
    processing_class=tokenizer,
    reward_processing_classes=tokenizer,
)
trainer.train()
