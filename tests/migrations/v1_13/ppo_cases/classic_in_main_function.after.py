import torch
from transformers import AutoTokenizer, pipeline
from trl import GRPOConfig, GRPOTrainer
from transformers import AutoModelForCausalLM


def main():
    # TODO(trl-compat): PPO config fields with no GRPO successor were removed: model_name="gpt2" (tracking only; the model is the trainer's `model`) (see MIGRATION.md#ppo-config-fields)
    # TODO(trl-compat): learning_rate was not set: its default differs across the TRL releases this file could run on (1e-05 in 0.4.0..0.7.10; 1.41e-05 in 0.7.11..0.11.4): pin trl; 1.41e-05 written (see MIGRATION.md#ppo-config-fields)
    # TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted kl_coef*KL from the reward per token (classic: adaptive controller) while GRPO adds beta*KL(k3) to the loss; with beta != 0 and no PEFT, GRPO reloads the reference model from model.config._name_or_path (no ref_model argument). Tune beta (GRPO default 0.0 = no reference model) (see MIGRATION.md#ppo-kl-beta)
    # TODO(trl-compat): PPO scored 4 prompts x 1 response per step; GRPO now samples 2 prompt(s) x 2 completions per generation batch of 4 (num_generations must divide it). Adjust num_generations / steps_per_generation if you want more prompts per step (see MIGRATION.md#ppo-batch-size)
    config = GRPOConfig(
        report_to="none",
        learning_rate=1.41e-5,
        seed=0,
        num_iterations=4,
        beta=0.2,
        max_grad_norm=0.0,
        gradient_checkpointing=False,
        bf16=False,
        num_train_epochs=1,
        max_completion_length=12,
        per_device_train_batch_size=2,
        steps_per_generation=2,
        num_generations=2,
    )
    tokenizer = AutoTokenizer.from_pretrained("gpt2")
    model = AutoModelForCausalLM.from_pretrained("gpt2")
    dataset = load_prompts(tokenizer)  # noqa: F821

    def reward_fn(prompts, completions, **kwargs):
        """Reward function built by trl-compat from the PPO loop's scoring code."""
        outputs = classifier(completions)
        rewards = [torch.tensor(-o["score"]) for o in outputs]
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
    )
    classifier = pipeline("text-classification", model="my-org/toxicity")
    # TODO(trl-compat): the PPO step loop was replaced by ppo_trainer.train(): generation settings moved to the config, the scoring code moved to `reward_fn`; removed: query_tensors = batch["input_ids"]; response_tensors = ppo_trainer.generate(query_tensors, return_prompt=False, m...; batch["response"] = tokenizer.batch_decode(response_tensors, skip_special_tok...; stats = ppo_trainer.step(query_tensors, response_tensors, rewards); ppo_trainer.log_stats(stats, batch, rewards) (see MIGRATION.md#ppo-step-loop)
    ppo_trainer.train()
    # TODO(trl-compat): model.save_pretrained: the checkpoint no longer holds value-head (v_head.*) weights; GRPO/Online DPO need none (see MIGRATION.md#value-head-models)
    model.save_pretrained("detox")


if __name__ == "__main__":
    main()
