from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer
from trl.trainer.ppov2_config import PPOv2Config
from trl.trainer.ppov2_trainer import PPOv2Trainer

config = PPOv2Config(output_dir="out", per_device_train_batch_size=4, gradient_accumulation_steps=2, total_episodes=1000)
tokenizer = AutoTokenizer.from_pretrained("EleutherAI/pythia-14m", padding_side="left")
policy = AutoModelForCausalLM.from_pretrained("EleutherAI/pythia-14m")
ref_policy = AutoModelForCausalLM.from_pretrained("EleutherAI/pythia-14m")
reward_model = AutoModelForSequenceClassification.from_pretrained("EleutherAI/pythia-14m", num_labels=1)
value_model = AutoModelForSequenceClassification.from_pretrained("EleutherAI/pythia-14m", num_labels=1)
trainer = PPOv2Trainer(config, tokenizer, policy, ref_policy, reward_model, train_dataset, value_model)  # noqa: F821
trainer.train()
