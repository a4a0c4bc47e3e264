from trl.experimental.ppo import AutoModelForCausalLMWithValueHead, PPOConfig, PPOTrainer

config = PPOConfig(output_dir="o", temperature=0.9, cliprange=0.1)
policy = AutoModelForCausalLMWithValueHead.from_pretrained("Qwen/Qwen3-0.6B")
trainer = PPOTrainer(args=config, processing_class=tok, model=policy.pretrained_model, ref_model=None,  # noqa: F821
                     reward_model=rm, value_model=vm, train_dataset=ds)  # noqa: F821
