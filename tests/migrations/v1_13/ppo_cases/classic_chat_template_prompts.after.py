import torch
from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer
from trl import GRPOConfig, GRPOTrainer

# TODO(trl-compat): PPO config fields with no GRPO successor were removed: model_name="Qwen/Qwen2.5-0.5B-Instruct" (tracking only; the model is the trainer's `model`) (see MIGRATION.md#ppo-config-fields)
# TODO(trl-compat): learning_rate was not set: its default differs across the TRL releases this file could run on (1e-05 in 0.4.0..0.7.10; 1.41e-05 in 0.7.11..0.11.4): pin trl; 1.41e-05 written (see MIGRATION.md#ppo-config-fields)
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted kl_coef*KL from the reward per token (classic: adaptive controller) while GRPO adds beta*KL(k3) to the loss; with beta != 0 and no PEFT, GRPO reloads the reference model from model.config._name_or_path (no ref_model argument). Tune beta (GRPO default 0.0 = no reference model) (see MIGRATION.md#ppo-kl-beta)
# TODO(trl-compat): PPO scored 4 prompts x 1 response per step; GRPO now samples 2 prompt(s) x 2 completions per generation batch of 4 (num_generations must divide it). Adjust num_generations / steps_per_generation if you want more prompts per step (see MIGRATION.md#ppo-batch-size)
config = GRPOConfig(
    learning_rate=1.41e-5,
    seed=0,
    num_iterations=4,
    beta=0.2,
    report_to="none",
    max_grad_norm=0.0,
    gradient_checkpointing=False,
    bf16=False,
    num_train_epochs=1,
    max_completion_length=64,
    per_device_train_batch_size=4,
    num_generations=2,
)
tokenizer = AutoTokenizer.from_pretrained("Qwen/Qwen2.5-0.5B-Instruct")
model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B-Instruct")


def to_ids(sample):
    messages = [{"role": "user", "content": sample["question"]}]
    sample["input_ids"] = tokenizer.apply_chat_template(messages, add_generation_prompt=True)
    return sample


dataset = load_dataset("gsm8k", "main", split="train").map(to_ids)
dataset.set_format("torch")


def reward_fn(prompts, completions, **kwargs):
    """Reward function built by trl-compat from the PPO loop's scoring code."""
    rewards = [torch.tensor(float("####" in r)) for r in completions]
    return [float(r) for r in rewards]


# trl-compat: GRPO and Online DPO read text prompts; rebuild them from the PPO-era input_ids
# TODO(trl-compat): prompt ids built by apply_chat_template: decoded keeping its special tokens; check for a doubled BOS (see MIGRATION.md#ppo-dataset-prompt)
if "prompt" not in dataset.column_names:
    dataset = dataset.with_format(None).map(
        lambda example: {"prompt": tokenizer.decode(example["input_ids"], skip_special_tokens=False)},
        remove_columns=[c for c in ("input_ids", "attention_mask") if c in dataset.column_names],
    )

ppo_trainer = GRPOTrainer(
    model=model,
    reward_funcs=reward_fn,
    args=config,
    train_dataset=dataset,
    processing_class=tokenizer,
)
# TODO(trl-compat): the PPO step loop was replaced by ppo_trainer.train(): generation settings moved to the config, the scoring code moved to `reward_fn`; removed: query_tensors = batch["input_ids"]; response_tensors = ppo_trainer.generate(query_tensors, return_prompt=False, m...; batch["response"] = tokenizer.batch_decode(response_tensors, skip_special_tok...; batch["query"] = tokenizer.batch_decode(query_tensors, skip_special_tokens=True); stats = ppo_trainer.step(query_tensors, response_tensors, rewards); ppo_trainer.log_stats(stats, batch, rewards) (see MIGRATION.md#ppo-step-loop)
ppo_trainer.train()
