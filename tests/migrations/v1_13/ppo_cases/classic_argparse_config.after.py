import argparse

from trl import GRPOConfig

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=1.41e-5)
parser.add_argument("--batch_size", type=int, default=64)
parser.add_argument("--mini_batch_size", type=int, default=16)
args = parser.parse_args()
# TODO(trl-compat): PPO config fields with no GRPO successor were removed: tracker_project_name="my-ppo" (set WANDB_PROJECT / run_name instead) (see MIGRATION.md#ppo-config-fields)
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted kl_coef*KL from the reward per token (classic: adaptive controller) while GRPO adds beta*KL(k3) to the loss; with beta != 0 and no PEFT, GRPO reloads the reference model from model.config._name_or_path (no ref_model argument). Tune beta (GRPO default 0.0 = no reference model) (see MIGRATION.md#ppo-kl-beta)
# TODO(trl-compat): PPO batch_size=args.batch_size prompts per step (one response each) is not static: GRPO needs num_generations >= 2 completions per prompt and num_generations must divide per_device_train_batch_size * num_processes * steps_per_generation; set num_generations / steps_per_generation (see MIGRATION.md#ppo-batch-size)
config = GRPOConfig(
    learning_rate=args.lr,
    num_iterations=4,
    beta=0.2,
    report_to="wandb",
    seed=0,
    max_grad_norm=0.0,
    gradient_checkpointing=False,
    bf16=False,
    per_device_train_batch_size=args.mini_batch_size,
)
