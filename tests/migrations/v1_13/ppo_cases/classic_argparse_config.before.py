import argparse

from trl import PPOConfig

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=1.41e-5)
parser.add_argument("--batch_size", type=int, default=64)
parser.add_argument("--mini_batch_size", type=int, default=16)
args = parser.parse_args()
config = PPOConfig(learning_rate=args.lr, batch_size=args.batch_size, mini_batch_size=args.mini_batch_size,
                   ppo_epochs=4, init_kl_coef=0.2, log_with="wandb", tracker_project_name="my-ppo")
