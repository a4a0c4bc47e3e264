# RLHF on Anthropic HH with a trained reward model, the classic TRL step loop (trl 0.4 - 0.11).
# runs-on: trl>=0.4.2,<0.12
# era: 1 (classic step loop, TRL 0.2-0.11)
#
# Era 1, the step loop with a reward *model* forward pass instead of a pipeline; reference model from
# create_reference_model, fixed KL (adap_kl_ctrl=False), generation through respond_to_batch-era kwargs.
import torch
from datasets import load_dataset
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from trl import AutoModelForCausalLMWithValueHead, PPOConfig, PPOTrainer, create_reference_model, set_seed

MODEL_NAME = "facebook/opt-350m"
REWARD_MODEL_NAME = "OpenAssistant/reward-model-deberta-v3-large-v2"

config = PPOConfig(
    model_name=MODEL_NAME,
    learning_rate=1e-5,
    batch_size=32,
    mini_batch_size=8,
    gradient_accumulation_steps=1,
    ppo_epochs=2,
    init_kl_coef=0.1,
    adap_kl_ctrl=False,
    cliprange=0.2,
    cliprange_value=0.2,
    vf_coef=0.1,
    seed=42,
    log_with=None,
)
set_seed(config.seed)

tokenizer = AutoTokenizer.from_pretrained(MODEL_NAME, padding_side="left")
if tokenizer.pad_token is None:
    tokenizer.pad_token = tokenizer.eos_token


def extract_prompt(example):
    text = example["chosen"]
    prompt = text.rsplit("\n\nAssistant:", 1)[0] + "\n\nAssistant:"
    return {"query": prompt}


def tokenize(example):
    example["input_ids"] = tokenizer.encode(example["query"], truncation=True, max_length=256)
    return example


dataset = load_dataset("Anthropic/hh-rlhf", split="train")
dataset = dataset.map(extract_prompt, remove_columns=dataset.column_names)
dataset = dataset.map(tokenize)
dataset.set_format(type="torch")


def collator(data):
    return {key: [d[key] for d in data] for key in data[0]}


model = AutoModelForCausalLMWithValueHead.from_pretrained(MODEL_NAME)
ref_model = create_reference_model(model)

ppo_trainer = PPOTrainer(config, model, ref_model, tokenizer, dataset=dataset, data_collator=collator)
device = ppo_trainer.accelerator.device

reward_tokenizer = AutoTokenizer.from_pretrained(REWARD_MODEL_NAME)
reward_model = AutoModelForSequenceClassification.from_pretrained(REWARD_MODEL_NAME).to(device)
reward_model.eval()

generation_kwargs = {
    "max_new_tokens": 48,
    "do_sample": True,
    "top_k": 0,
    "top_p": 1.0,
    "pad_token_id": tokenizer.pad_token_id,
}

for step, batch in enumerate(ppo_trainer.dataloader):
    query_tensors = batch["input_ids"]
    response_tensors = ppo_trainer.generate(query_tensors, return_prompt=False, **generation_kwargs)
    batch["response"] = tokenizer.batch_decode(response_tensors, skip_special_tokens=True)

    inputs = reward_tokenizer(
        batch["query"], batch["response"], return_tensors="pt", padding=True, truncation=True
    ).to(device)
    with torch.no_grad():
        scores = reward_model(**inputs).logits[:, 0]
    rewards = [score for score in scores]

    stats = ppo_trainer.step(query_tensors, response_tensors, rewards)
    ppo_trainer.log_stats(stats, batch, rewards)
    if step % 100 == 0:
        print(f"step {step}: mean reward {torch.stack(rewards).mean().item():.3f}")

ppo_trainer.save_pretrained("opt-350m-hh-ppo")
