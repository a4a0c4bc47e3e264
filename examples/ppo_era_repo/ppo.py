# RLHF step 3: PPO against a sentiment reward (positive movie reviews), the classic TRL step loop.
#
#   python ppo.py                      # defaults below
#   accelerate launch ppo.py --log_with wandb
#
# Written against trl==0.8.6 (see requirements.txt). What this script exercises, each checked against the 0.8.6 wheel:
#   - trl.PPOConfig dataclass fields: model_name, query_dataset, reward_model ("task:model" string), learning_rate,
#     batch_size, mini_batch_size, gradient_accumulation_steps, ppo_epochs, init_kl_coef, adap_kl_ctrl, target_kl,
#     early_stopping, log_with, seed, steps, tracker_project_name (trl/trainer/ppo_config.py)
#   - PPOConfig built from a HfArgumentParser ScriptArguments dataclass (the project's own flags)
#   - trl.AutoModelForCausalLMWithValueHead.from_pretrained, trl.create_reference_model(model, num_shared_layers=None)
#   - trl.PPOTrainer(config, model, ref_model, tokenizer, dataset, optimizer, data_collator, num_shared_layers,
#     lr_scheduler) (trl/trainer/ppo_trainer.py)
#   - ppo_trainer.dataloader, ppo_trainer.accelerator, ppo_trainer.generate(query_tensor, length_sampler, batch_size,
#     return_prompt, generate_ref_response, **generation_kwargs), ppo_trainer.step(queries, responses, scores),
#     ppo_trainer.log_stats(stats, batch, rewards, columns_to_log), ppo_trainer.save_pretrained(path)
#   - trl.core.LengthSampler(min_value, max_value), trl.set_seed (trl/core.py)
from dataclasses import dataclass, field
from typing import Optional

import torch
from datasets import load_dataset
from tqdm import tqdm
from transformers import AutoTokenizer, HfArgumentParser, pipeline

from trl import AutoModelForCausalLMWithValueHead, PPOConfig, PPOTrainer, create_reference_model, set_seed
from trl.core import LengthSampler


@dataclass
class ScriptArguments:
    model_name: Optional[str] = field(default="lvwerra/gpt2-imdb", metadata={"help": "the policy to tune"})
    reward_model: Optional[str] = field(default="sentiment-analysis:lvwerra/distilbert-imdb")
    dataset_name: Optional[str] = field(default="stanfordnlp/imdb")
    learning_rate: Optional[float] = field(default=1.41e-5)
    batch_size: Optional[int] = field(default=16)
    mini_batch_size: Optional[int] = field(default=4)
    ppo_epochs: Optional[int] = field(default=2)
    init_kl_coef: Optional[float] = field(default=0.2)
    target_kl: Optional[float] = field(default=6.0)
    total_steps: Optional[int] = field(default=2048, metadata={"help": "prompts to train on, in total"})
    log_with: Optional[str] = field(default=None, metadata={"help": "'wandb' or 'tensorboard'"})
    seed: Optional[int] = field(default=0)
    min_query_tokens: Optional[int] = field(default=2)
    max_query_tokens: Optional[int] = field(default=8)
    min_new_tokens: Optional[int] = field(default=4)
    max_new_tokens: Optional[int] = field(default=16)
    output_dir: Optional[str] = field(default="checkpoints/ppo")


script_args = HfArgumentParser(ScriptArguments).parse_args_into_dataclasses()[0]

config = PPOConfig(
    model_name=script_args.model_name,
    query_dataset=script_args.dataset_name,
    reward_model=script_args.reward_model,
    learning_rate=script_args.learning_rate,
    batch_size=script_args.batch_size,
    mini_batch_size=script_args.mini_batch_size,
    gradient_accumulation_steps=1,
    ppo_epochs=script_args.ppo_epochs,
    init_kl_coef=script_args.init_kl_coef,
    adap_kl_ctrl=True,
    target_kl=script_args.target_kl,
    early_stopping=False,
    steps=script_args.total_steps,
    log_with=script_args.log_with,
    seed=script_args.seed,
    tracker_project_name="ppo-era-repo",
)

set_seed(config.seed)

tokenizer = AutoTokenizer.from_pretrained(config.model_name)
tokenizer.pad_token = tokenizer.eos_token


def build_dataset():
    """Short random-length prefixes of IMDB reviews, tokenised; `query` keeps the text for logging."""
    ds = load_dataset(config.query_dataset, split="train")
    ds = ds.rename_columns({"text": "review"})
    ds = ds.filter(lambda x: len(x["review"]) > 200, batched=False)
    sample_len = LengthSampler(script_args.min_query_tokens, script_args.max_query_tokens)

    def tokenize(sample):
        sample["input_ids"] = tokenizer.encode(sample["review"])[: sample_len()]
        sample["query"] = tokenizer.decode(sample["input_ids"])
        return sample

    ds = ds.map(tokenize, batched=False)
    ds.set_format(type="torch")
    return ds


def collator(rows):
    return {key: [row[key] for row in rows] for key in rows[0]}


dataset = build_dataset()
model = AutoModelForCausalLMWithValueHead.from_pretrained(config.model_name)
ref_model = create_reference_model(model)

ppo_trainer = PPOTrainer(config, model, ref_model, tokenizer, dataset=dataset, data_collator=collator)

device = ppo_trainer.accelerator.device
if ppo_trainer.accelerator.num_processes == 1:
    device = 0 if torch.cuda.is_available() else "cpu"
task, reward_model_name = config.reward_model.split(":")
sentiment_pipe = pipeline(task, model=reward_model_name, device=device)
reward_kwargs = {"top_k": None, "function_to_apply": "none", "batch_size": 16}

response_length = LengthSampler(script_args.min_new_tokens, script_args.max_new_tokens)
generation_kwargs = {
    "min_length": -1,
    "top_k": 0.0,
    "top_p": 1.0,
    "do_sample": True,
    "pad_token_id": tokenizer.eos_token_id,
}


def positive_scores(texts):
    """The logit of the POSITIVE label for each text."""
    outputs = sentiment_pipe(texts, **reward_kwargs)
    scores = []
    for labels in outputs:
        by_label = {entry["label"]: entry["score"] for entry in labels}
        scores.append(torch.tensor(by_label.get("POSITIVE", labels[-1]["score"])))
    return scores


for step, batch in enumerate(tqdm(ppo_trainer.dataloader)):
    query_tensors = batch["input_ids"]
    response_tensors, ref_response_tensors = ppo_trainer.generate(
        query_tensors,
        length_sampler=response_length,
        return_prompt=False,
        generate_ref_response=True,
        **generation_kwargs,
    )
    batch["response"] = tokenizer.batch_decode(response_tensors)
    batch["ref_response"] = tokenizer.batch_decode(ref_response_tensors)

    rewards = positive_scores([q + r for q, r in zip(batch["query"], batch["response"])])
    batch["ref_rewards"] = positive_scores([q + r for q, r in zip(batch["query"], batch["ref_response"])])

    stats = ppo_trainer.step(query_tensors, response_tensors, rewards)
    ppo_trainer.log_stats(stats, batch, rewards, columns_to_log=["query", "response", "ref_response", "ref_rewards"])
    if step + 1 >= config.steps // config.batch_size:
        break

ppo_trainer.save_pretrained(script_args.output_dir)
