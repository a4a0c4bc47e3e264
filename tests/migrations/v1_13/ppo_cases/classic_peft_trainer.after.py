import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoTokenizer
from trl import GRPOConfig, GRPOTrainer
from transformers import AutoModelForCausalLM
import random


class LengthSampler:
    """trl.core.LengthSampler (removed in TRL 0.25), kept by trl-compat: a random length in [min_value, max_value)."""

    def __init__(self, min_value, max_value):
        self.values = list(range(min_value, max_value))

    def __call__(self):
        return random.choice(self.values)


# TODO(trl-compat): PPO config fields with no GRPO successor were removed: model_name="facebook/opt-350m" (tracking only; the model is the trainer's `model`); accelerator_kwargs={"mixed_precision": "bf16"} (no successor (TrainingArguments configure accelerate)) (see MIGRATION.md#ppo-config-fields)
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted kl_coef*KL from the reward per token (classic: adaptive controller) while GRPO adds beta*KL(k3) to the loss; with beta != 0 and no PEFT, GRPO reloads the reference model from model.config._name_or_path (no ref_model argument). Tune beta (GRPO default 0.0 = no reference model) (see MIGRATION.md#ppo-kl-beta)
# TODO(trl-compat): PPO scored 16 prompts x 1 response per step; GRPO now samples 2 prompt(s) x 8 completions per generation batch of 16 (num_generations must divide it). Adjust num_generations / steps_per_generation if you want more prompts per step (see MIGRATION.md#ppo-batch-size)
config = GRPOConfig(
    learning_rate=1.4e-5,
    seed=0,
    num_iterations=4,
    beta=0.2,
    report_to="none",
    max_grad_norm=0.0,
    gradient_checkpointing=False,
    bf16=True,
    num_train_epochs=1,
    max_completion_length=32,
    top_p=0.95,
    gradient_accumulation_steps=1,
    per_device_train_batch_size=16,
    num_generations=8,
)
lora_config = LoraConfig(r=16, lora_alpha=32, task_type="CAUSAL_LM")
model = get_peft_model(AutoModelForCausalLM.from_pretrained("facebook/opt-350m"), lora_config)
tokenizer = AutoTokenizer.from_pretrained("facebook/opt-350m")


def reward_fn(prompts, completions, **kwargs):
    """Reward function built by trl-compat from the PPO loop's scoring code."""
    texts = [q + r for q, r in zip(prompts, completions)]
    rewards = [torch.tensor(-abs(len(t) - 200) / 200.0) for t in texts]
    return [float(r) for r in rewards]


# trl-compat: GRPO and Online DPO read text prompts; rebuild them from the PPO-era input_ids
if "prompt" not in dataset.column_names:
    dataset = dataset.with_format(None).map(
        lambda example: {"prompt": tokenizer.decode(example["input_ids"], skip_special_tokens=True)},
        remove_columns=[c for c in ("input_ids", "attention_mask") if c in dataset.column_names],
    )

ppo_trainer = GRPOTrainer(
    model=model,
    reward_funcs=reward_fn,
    args=config,
    train_dataset=dataset,
    processing_class=tokenizer,
)  # noqa: F821
output_length_sampler = LengthSampler(8, 33)

# TODO(trl-compat): the PPO step loop was replaced by ppo_trainer.train(): generation settings moved to the config, the scoring code moved to `reward_fn`; removed: question_tensors = batch["input_ids"]; response_tensors = ppo_trainer.generate(question_tensors, return_prompt=False,; batch["response"] = tokenizer.batch_decode(response_tensors, skip_special_tok...; stats = ppo_trainer.step(question_tensors, response_tensors, rewards); ppo_trainer.log_stats(stats, batch, rewards); if epoch % 10 == 0: (see MIGRATION.md#ppo-step-loop)
ppo_trainer.train()
