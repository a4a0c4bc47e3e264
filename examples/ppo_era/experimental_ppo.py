# PPO on a Qwen chat model with trl.experimental.ppo (trl 0.26 - 1.12), configured from the command line.
# runs-on: trl>=0.27,<1.13
# era: 3 (trl.experimental.ppo, TRL 0.26-1.12)
#
# Era 3: the experimental home of PPO, HfArgumentParser over (ScriptArguments, PPOConfig, ModelConfig), a chat-format
# prompt dataset tokenized with the chat template, reward and value models from reward_model_path.
from dataclasses import dataclass, field

from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer, HfArgumentParser

from trl import ModelConfig, get_peft_config
from trl.experimental.ppo import PPOConfig, PPOTrainer


@dataclass
class ScriptArguments:
    dataset_name: str = field(default="trl-lib/ultrafeedback-prompt")
    dataset_train_split: str = field(default="train")
    dataset_test_split: str = field(default="test")


parser = HfArgumentParser((ScriptArguments, PPOConfig, ModelConfig))
script_args, training_args, model_args = parser.parse_args_into_dataclasses()
if model_args.model_name_or_path is None:
    model_args.model_name_or_path = "Qwen/Qwen2.5-0.5B-Instruct"
if training_args.reward_model_path is None or training_args.reward_model_path == "EleutherAI/pythia-160m":
    training_args.reward_model_path = "Skywork/Skywork-Reward-V2-Qwen3-0.6B"

tokenizer = AutoTokenizer.from_pretrained(model_args.model_name_or_path, padding_side="left")
if tokenizer.pad_token is None:
    tokenizer.pad_token = tokenizer.eos_token

value_model = AutoModelForSequenceClassification.from_pretrained(training_args.reward_model_path, num_labels=1)
reward_model = AutoModelForSequenceClassification.from_pretrained(training_args.reward_model_path, num_labels=1)
policy = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path, dtype=model_args.dtype)

peft_config = get_peft_config(model_args)
if peft_config is None:
    ref_policy = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path, dtype=model_args.dtype)
else:
    ref_policy = None

dataset = load_dataset(script_args.dataset_name)
train_dataset = dataset[script_args.dataset_train_split]
eval_dataset = dataset[script_args.dataset_test_split]


def prepare_dataset(dataset, tokenizer):
    def tokenize(element):
        input_ids = tokenizer.apply_chat_template(element["prompt"], add_generation_prompt=True)
        return {"input_ids": input_ids, "lengths": len(input_ids)}

    return dataset.map(tokenize, remove_columns=dataset.column_names)


train_dataset = prepare_dataset(train_dataset, tokenizer)
eval_dataset = prepare_dataset(eval_dataset, tokenizer)

trainer = PPOTrainer(
    args=training_args,
    processing_class=tokenizer,
    model=policy,
    ref_model=ref_policy,
    reward_model=reward_model,
    value_model=value_model,
    train_dataset=train_dataset,
    eval_dataset=eval_dataset,
    peft_config=peft_config,
)
trainer.train()
trainer.save_model(training_args.output_dir)
