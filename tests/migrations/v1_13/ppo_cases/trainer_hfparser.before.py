from dataclasses import dataclass, field

from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer, HfArgumentParser
from trl import ModelConfig, PPOConfig, PPOTrainer


@dataclass
class ScriptArguments:
    dataset_name: str = field(default="trl-internal-testing/descriptiveness-sentiment-trl-style")


parser = HfArgumentParser((ScriptArguments, PPOConfig, ModelConfig))
script_args, training_args, model_args = parser.parse_args_into_dataclasses()
tokenizer = AutoTokenizer.from_pretrained(model_args.model_name_or_path, padding_side="left")
value_model = AutoModelForSequenceClassification.from_pretrained(training_args.reward_model_path, num_labels=1)
reward_model = AutoModelForSequenceClassification.from_pretrained(training_args.reward_model_path, num_labels=1)
policy = AutoModelForCausalLM.from_pretrained(training_args.sft_model_path)
print(training_args.kl_coef, training_args.num_ppo_epochs, training_args.response_length)
trainer = PPOTrainer(
    args=training_args,
    processing_class=tokenizer,
    model=policy,
    ref_model=None,
    reward_model=reward_model,
    value_model=value_model,
    train_dataset=train_dataset,  # noqa: F821
)
trainer.train()
