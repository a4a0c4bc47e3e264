import argparse

from trl import GRPOConfig

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=1.41e-5)
parser.add_argument("--batch_size", type=int, default=64)
parser.add_argument("--mini_batch_size", type=int, default=16)
args = parser.parse_args()
# TODO(trl-compat): PPO config fields with no GRPO successor were removed [ppo-to-grpo]
# TODO(trl-compat): beta=0.2 carries PPO's init_kl_coef, but PPO subtracted... [ppo-to-grpo]
# TODO(trl-compat): PPO batch_size=args.batch_size prompts per step [ppo-to-grpo]
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
