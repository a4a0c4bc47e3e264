from datasets import load_dataset
from trl import GRPOConfig, GRPOTrainer, create_reference_model

config = GRPOConfig(output_dir="o", num_generations=4, per_device_train_batch_size=4)
trainer = GRPOTrainer(model="Qwen/Qwen3-0.6B", reward_funcs=lambda completions, **kw: [0.0] * len(completions),
                      args=config, train_dataset=load_dataset("trl-lib/tldr", split="train"))
trainer.train()
