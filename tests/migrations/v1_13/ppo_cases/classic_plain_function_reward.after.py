from transformers import AutoTokenizer
from trl import GRPOConfig, GRPOTrainer
from transformers import AutoModelForCausalLM


def length_reward(texts):
    return [float(len(t.split())) for t in texts]


# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted kl_coef*KL from the reward per token (classic: adaptive controller) while GRPO adds beta*KL(k3) to the loss; with beta != 0 and no PEFT, GRPO reloads the reference model from model.config._name_or_path (no ref_model argument). Tune beta (GRPO default 0.0 = no reference model) (see MIGRATION.md#ppo-kl-beta)
# TODO(trl-compat): PPO scored 4 prompts x 1 response per step; GRPO now samples 2 prompt(s) x 2 completions per generation batch of 4 (num_generations must divide it). Adjust num_generations / steps_per_generation if you want more prompts per step (see MIGRATION.md#ppo-batch-size)
config = GRPOConfig(
    learning_rate=3e-6,
    seed=7,
    num_iterations=4,
    beta=0.2,
    report_to="none",
    max_grad_norm=0.0,
    gradient_checkpointing=False,
    bf16=False,
    num_train_epochs=1,
    max_completion_length=16,
    top_k=0,
    top_p=0.9,
    gradient_accumulation_steps=1,
    per_device_train_batch_size=2,
    steps_per_generation=2,
    num_generations=2,
)
tokenizer = AutoTokenizer.from_pretrained("gpt2")
model = AutoModelForCausalLM.from_pretrained("gpt2")


def reward_fn(prompts, completions, **kwargs):
    """Reward function built by trl-compat from the PPO loop's scoring code."""
    rewards = length_reward(completions)
    return [float(r) for r in rewards]


# TODO(trl-compat): GRPOTrainer reads a `prompt` column (text or chat messages); PPO datasets held `input_ids`: make sure this dataset has `prompt` (see MIGRATION.md#ppo-dataset-prompt)
trainer = GRPOTrainer(
    model=model,
    reward_funcs=reward_fn,
    args=config,
    train_dataset=make_dataset(),
    processing_class=tokenizer,
)  # noqa: F821

# TODO(trl-compat): the PPO step loop was replaced by trainer.train(): generation settings moved to the config, the scoring code moved to `reward_fn`; removed: queries = batch["input_ids"]; responses = trainer.generate(queries, return_prompt=False, max_new_tokens=16,...; response_texts = tokenizer.batch_decode(responses, skip_special_tokens=True); trainer.step(queries, responses, rewards) (see MIGRATION.md#ppo-step-loop)
trainer.train()
