# Vicuna-LoRA-RLHF style: the value-head wrapper's 8-bit flag is printed after loading
from peft import LoraConfig, get_peft_model

from trl import GRPOConfig, GRPOTrainer
from transformers import AutoModelForCausalLM

# TODO(trl-compat): PPO config fields with no GRPO successor were removed: model_name="lmsys/vicuna-7b" (tracking only; the model is the trainer's `model`) (see MIGRATION.md#ppo-config-fields)
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted kl_coef*KL from the reward per token (classic: adaptive controller) while GRPO adds beta*KL(k3) to the loss; with beta != 0 and no PEFT, GRPO reloads the reference model from model.config._name_or_path (no ref_model argument). Tune beta (GRPO default 0.0 = no reference model) (see MIGRATION.md#ppo-kl-beta)
# TODO(trl-compat): PPO scored 8 prompts x 1 response per step; GRPO now samples 2 prompt(s) x 4 completions per generation batch of 8 (num_generations must divide it). Adjust num_generations / steps_per_generation if you want more prompts per step (see MIGRATION.md#ppo-batch-size)
config = GRPOConfig(
    learning_rate=1.4e-5,
    seed=0,
    num_iterations=4,
    beta=0.2,
    report_to="none",
    max_grad_norm=0.0,
    gradient_checkpointing=False,
    bf16=False,
    per_device_train_batch_size=4,
    steps_per_generation=2,
    num_generations=4,
)
lora_config = LoraConfig(r=8, lora_alpha=16, task_type="CAUSAL_LM")
model = get_peft_model(AutoModelForCausalLM.from_pretrained("lmsys/vicuna-7b", load_in_8bit=True), lora_config)
print("finetune model's is_loaded_in_8bit: ", getattr(model, "is_loaded_in_8bit", False), getattr(model, "is_loaded_in_4bit", False))


def reward_fn(prompts, completions, **kwargs):
    """Reward for each completion (one float each): port the scoring code of the PPO loop here."""
    raise NotImplementedError("trl-compat: port the PPO reward computation into this function")


# TODO(trl-compat): write the reward: `reward_fn(prompts, completions, **kwargs)` must return one float per completion (it replaces the scores passed to ppo_trainer.step) (see MIGRATION.md#ppo-reward-function)
# TODO(trl-compat): GRPOTrainer needs a train_dataset with a `prompt` column (see MIGRATION.md#ppo-dataset-prompt)
ppo_trainer = GRPOTrainer(model=model, reward_funcs=reward_fn, args=config, processing_class=None)
