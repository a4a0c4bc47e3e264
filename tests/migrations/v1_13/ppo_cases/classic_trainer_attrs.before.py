from trl import PPOConfig, PPOTrainer

config = PPOConfig(batch_size=8, mini_batch_size=8)
ppo_trainer = PPOTrainer(config, model, None, tokenizer, dataset=dataset, num_shared_layers=2)  # noqa: F821
device = ppo_trainer.current_device
print(ppo_trainer.config.batch_size, ppo_trainer.tokenizer.eos_token)
ppo_trainer.save_pretrained("ckpt")
ppo_trainer.push_to_hub("me/ckpt")
