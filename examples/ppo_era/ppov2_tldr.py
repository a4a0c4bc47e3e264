# PPOv2 on TL;DR summarisation (trl 0.11: PPOv2Trainer/PPOv2Config, keywords config/tokenizer/policy/ref_policy).
# runs-on: trl>=0.11,<0.12
# era: 2 (Trainer-style PPOv2, TRL 0.9.3-0.12)
#
# Era 2, first Trainer-style API: pre-tokenized prompts (input_ids), separate reward and value models
# (sequence classification, num_labels=1), trainer.train(), save_model, generate_completions.
import shutil

from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer

from trl import PPOv2Config, PPOv2Trainer

SIMPLE_CHAT_TEMPLATE = "{% for message in messages %}{{message['content']}}{% endfor %}"

config = PPOv2Config(
    output_dir="models/minimal/ppo_tldr",
    learning_rate=3e-6,
    per_device_train_batch_size=16,
    gradient_accumulation_steps=4,
    total_episodes=1_000_000,
    num_ppo_epochs=4,
    num_mini_batches=1,
    local_rollout_forward_batch_size=16,
    response_length=53,
    stop_token="eos",
    kl_coef=0.05,
    cliprange=0.2,
    vf_coef=0.1,
    missing_eos_penalty=1.0,
    sft_model_path="cleanrl/EleutherAI_pythia-1b-deduped__sft__tldr",
    reward_model_path="cleanrl/EleutherAI_pythia-1b-deduped__reward__tldr",
    bf16=True,
    report_to="wandb",
)
shutil.rmtree(config.output_dir, ignore_errors=True)

tokenizer = AutoTokenizer.from_pretrained(config.sft_model_path, padding_side="left")
tokenizer.add_special_tokens({"pad_token": "[PAD]"})
if tokenizer.chat_template is None:
    tokenizer.chat_template = SIMPLE_CHAT_TEMPLATE

value_model = AutoModelForSequenceClassification.from_pretrained(config.reward_model_path, num_labels=1)
reward_model = AutoModelForSequenceClassification.from_pretrained(config.reward_model_path, num_labels=1)
ref_policy = AutoModelForCausalLM.from_pretrained(config.sft_model_path)
policy = AutoModelForCausalLM.from_pretrained(config.sft_model_path)

raw_datasets = load_dataset("trl-internal-testing/tldr-preference-sft-trl-style")
train_dataset = raw_datasets["train"]
eval_dataset = raw_datasets["validation"]


def prepare_dataset(dataset, tokenizer):
    """pre-tokenize the dataset before training; only collate during training"""

    def tokenize(element):
        input_ids = tokenizer.apply_chat_template(element["messages"][:1], padding=False, add_generation_prompt=True)
        return {"input_ids": input_ids, "lengths": len(input_ids)}

    return dataset.map(tokenize, remove_columns=dataset.column_names, num_proc=config.dataset_num_proc)


train_dataset = prepare_dataset(train_dataset, tokenizer)
eval_dataset = prepare_dataset(eval_dataset, tokenizer)
train_dataset = train_dataset.filter(lambda x: x["lengths"] <= 512, num_proc=config.dataset_num_proc)
assert train_dataset[0]["input_ids"][-1] != tokenizer.eos_token_id, "The last token should not be an EOS token"

trainer = PPOv2Trainer(
    config=config,
    tokenizer=tokenizer,
    policy=policy,
    ref_policy=ref_policy,
    reward_model=reward_model,
    value_model=value_model,
    train_dataset=train_dataset,
    eval_dataset=eval_dataset,
)
trainer.train()
trainer.save_model(config.output_dir)
trainer.generate_completions()
