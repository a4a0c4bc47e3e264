from trl import PPOConfig

config = PPOConfig(output_dir="o", per_device_train_batch_size=6, gradient_accumulation_steps=2, eval_strategy="steps",
                   eval_steps=100, num_mini_batches=2, num_sample_generations=0)
