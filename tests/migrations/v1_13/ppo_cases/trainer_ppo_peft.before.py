from peft import LoraConfig
from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer
from trl import PPOConfig, PPOTrainer

training_args = PPOConfig(
    output_dir="pythia-ppo",
    learning_rate=3e-6,
    per_device_train_batch_size=16,
    gradient_accumulation_steps=1,
    total_episodes=10000,
    missing_eos_penalty=1.0,
    stop_token="eos",
    kl_estimator="k3",
    exp_name="ppo-exp",
)
tokenizer = AutoTokenizer.from_pretrained("EleutherAI/pythia-1b-deduped", padding_side="left")
policy = AutoModelForCausalLM.from_pretrained("EleutherAI/pythia-1b-deduped")
reward_model = AutoModelForSequenceClassification.from_pretrained("my-rm", num_labels=1)
value_model = AutoModelForSequenceClassification.from_pretrained("my-rm", num_labels=1)
peft_config = LoraConfig(r=8, task_type="CAUSAL_LM")
trainer = PPOTrainer(
    args=training_args,
    processing_class=tokenizer,
    model=policy,
    ref_model=None,
    reward_model=reward_model,
    value_model=value_model,
    train_dataset=train_dataset,  # noqa: F821
    peft_config=peft_config,
)
trainer.train()
trainer.save_model(training_args.output_dir)
