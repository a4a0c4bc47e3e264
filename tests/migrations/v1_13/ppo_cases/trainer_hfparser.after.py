from dataclasses import dataclass, field

from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer, HfArgumentParser
from trl import ModelConfig, GRPOConfig, GRPOTrainer


@dataclass
class ScriptArguments:
    dataset_name: str = field(default="trl-internal-testing/descriptiveness-sentiment-trl-style")
    # trl-compat: PPOConfig fields the script still reads (no GRPO/Online DPO field)
    reward_model_path: str = "EleutherAI/pythia-160m"
    sft_model_path: str = "EleutherAI/pythia-160m"


# TODO(trl-compat): the config is parsed from the command line / a file as GRPOConfig [ppo-to-grpo]
parser = HfArgumentParser((ScriptArguments, GRPOConfig, ModelConfig))
script_args, training_args, model_args = parser.parse_args_into_dataclasses()
tokenizer = AutoTokenizer.from_pretrained(model_args.model_name_or_path, padding_side="left")
value_model = AutoModelForSequenceClassification.from_pretrained(script_args.reward_model_path, num_labels=1)
reward_model = AutoModelForSequenceClassification.from_pretrained(script_args.reward_model_path, num_labels=1)
policy = AutoModelForCausalLM.from_pretrained(script_args.sft_model_path)
print(training_args.beta, training_args.num_iterations, training_args.max_completion_length)
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
)
trainer.train()
