import torch
from transformers import AutoTokenizer, pipeline, AutoModelForCausalLM
from trl import GRPOConfig, GRPOTrainer


def main():
    # TODO(trl-compat): PPO config fields with no GRPO successor were removed [ppo-to-grpo]
    # TODO(trl-compat): learning_rate=1.41e-05 written, old default uncertain [ppo-to-grpo]
    # TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted... [ppo-to-grpo]
    # TODO(trl-compat): PPO scored 4 prompts x 1 response per step [ppo-to-grpo]
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

    # TODO(trl-compat): GRPOTrainer reads a `prompt` column [ppo-to-grpo]
    ppo_trainer = GRPOTrainer(
        model=model,
        reward_funcs=reward_fn,
        args=config,
        train_dataset=dataset,
        processing_class=tokenizer,
    )
    classifier = pipeline("text-classification", model="my-org/toxicity")
    # TODO(trl-compat): the PPO step loop was replaced by ppo_trainer.train() [ppo-to-grpo]
    ppo_trainer.train()
    # TODO(trl-compat): model.save_pretrained: the checkpoint no longer holds... [value-head-models]
    model.save_pretrained("detox")


if __name__ == "__main__":
    main()
