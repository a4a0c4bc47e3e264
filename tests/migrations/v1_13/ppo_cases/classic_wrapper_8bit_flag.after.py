# Vicuna-LoRA-RLHF style: the value-head wrapper's 8-bit flag is printed after loading
from peft import LoraConfig, prepare_model_for_kbit_training, get_peft_model

from trl import GRPOConfig, GRPOTrainer
from transformers import AutoModelForCausalLM

# TODO(trl-compat): PPO config fields with no GRPO successor were removed [ppo-to-grpo]
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted... [ppo-to-grpo]
# TODO(trl-compat): PPO scored 8 prompts x 1 response per step [ppo-to-grpo]
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
# TODO(trl-compat): TRL's value-head wrapper put a k-bit model on this... [value-head-models]
model = get_peft_model(prepare_model_for_kbit_training(AutoModelForCausalLM.from_pretrained("lmsys/vicuna-7b", load_in_8bit=True)), lora_config)
print("finetune model's is_loaded_in_8bit: ", getattr(model, "is_loaded_in_8bit", False), getattr(model, "is_loaded_in_4bit", False))


def reward_fn(prompts, completions, **kwargs):
    """Reward for each completion (one float each): port the scoring code of the PPO loop here."""
    raise NotImplementedError("trl-compat: port the PPO reward computation into this function")


# TODO(trl-compat): write the reward: `reward_fn(prompts, completions, **kwargs)`... [ppo-to-grpo]
# TODO(trl-compat): GRPOTrainer needs a train_dataset with a `prompt` column [ppo-to-grpo]
ppo_trainer = GRPOTrainer(model=model, reward_funcs=reward_fn, args=config, processing_class=None)
