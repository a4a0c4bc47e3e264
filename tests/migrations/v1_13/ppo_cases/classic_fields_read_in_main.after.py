# the config is built inside main(); a helper at module level has its own local `model_name`
from trl import GRPOConfig, GRPOTrainer
from transformers import AutoModelForCausalLM


def model_card(model_name):
    return f"PPO-tuned {model_name}"


def main(args):
    # trl-compat: PPO config values read below (GRPOConfig has no such fields)
    ppo_config_model_name = args.base_model
    # TODO(trl-compat): PPO config fields with no GRPO successor were removed: model_name=args.base_model (tracking only; the model is the trainer's `model`) (see MIGRATION.md#ppo-config-fields)
    # TODO(trl-compat): learning_rate was not set: its default differs across the TRL releases this file could run on (1e-05 in 0.4.0..0.7.10; 1.41e-05 in 0.7.11..0.11.4): pin trl; 1.41e-05 written (see MIGRATION.md#ppo-config-fields)
    # TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted kl_coef*KL from the reward per token (classic: adaptive controller) while GRPO adds beta*KL(k3) to the loss; with beta != 0 and no PEFT, GRPO reloads the reference model from model.config._name_or_path (no ref_model argument). Tune beta (GRPO default 0.0 = no reference model) (see MIGRATION.md#ppo-kl-beta)
    # TODO(trl-compat): PPO batch_size=args.batch_size prompts per step (one response each) is not static: GRPO needs num_generations >= 2 completions per prompt and num_generations must divide per_device_train_batch_size * num_processes * steps_per_generation; set num_generations / steps_per_generation (see MIGRATION.md#ppo-batch-size)
    ppo_config = GRPOConfig(
        learning_rate=1.41e-5,
        seed=0,
        num_iterations=4,
        beta=0.2,
        report_to="none",
        max_grad_norm=0.0,
        gradient_checkpointing=False,
        bf16=False,
        per_device_train_batch_size=args.batch_size,
    )
    model = AutoModelForCausalLM.from_pretrained(ppo_config_model_name)

    def reward_fn(prompts, completions, **kwargs):
        """Reward for each completion (one float each): port the scoring code of the PPO loop here."""
        raise NotImplementedError("trl-compat: port the PPO reward computation into this function")

    # TODO(trl-compat): write the reward: `reward_fn(prompts, completions, **kwargs)` must return one float per completion (it replaces the scores passed to ppo_trainer.step) (see MIGRATION.md#ppo-reward-function)
    # TODO(trl-compat): GRPOTrainer needs a train_dataset with a `prompt` column (see MIGRATION.md#ppo-dataset-prompt)
    trainer = GRPOTrainer(model=model, reward_funcs=reward_fn, args=ppo_config)
    print(model_card(ppo_config_model_name))
    return trainer
