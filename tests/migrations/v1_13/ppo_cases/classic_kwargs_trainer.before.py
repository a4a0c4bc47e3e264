from trl import PPOConfig, PPOTrainer, AutoModelForCausalLMWithValueHead

ppo_config = PPOConfig(
    exp_name="my-run",
    learning_rate=1.41e-5,
    batch_size=32,
    mini_batch_size=8,
    gradient_accumulation_steps=2,
    optimize_cuda_cache=True,
    early_stopping=True,
    target_kl=0.1,
    ppo_epochs=4,
    seed=42,
    init_kl_coef=0.2,
    adap_kl_ctrl=True,
    tracker_project_name="trl",
    max_grad_norm=None,
)
model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
ppo_trainer = PPOTrainer(
    config=ppo_config,
    model=model,
    ref_model=None,
    tokenizer=tokenizer,  # noqa: F821
    dataset=dataset,  # noqa: F821
    data_collator=collator,  # noqa: F821
)
