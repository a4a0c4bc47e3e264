import torch
from peft import LoraConfig
from transformers import AutoTokenizer
from trl import AutoModelForCausalLMWithValueHead, PPOConfig, PPOTrainer
from trl.core import LengthSampler

config = PPOConfig(model_name="facebook/opt-350m", learning_rate=1.4e-5, batch_size=16, mini_batch_size=16,
                   gradient_accumulation_steps=1, accelerator_kwargs={"mixed_precision": "bf16"})
lora_config = LoraConfig(r=16, lora_alpha=32, task_type="CAUSAL_LM")
model = AutoModelForCausalLMWithValueHead.from_pretrained(config.model_name, peft_config=lora_config)
tokenizer = AutoTokenizer.from_pretrained(config.model_name)
ppo_trainer = PPOTrainer(config, model, ref_model=None, tokenizer=tokenizer, dataset=dataset)  # noqa: F821
output_length_sampler = LengthSampler(8, 33)

for epoch, batch in enumerate(ppo_trainer.dataloader):
    question_tensors = batch["input_ids"]
    response_tensors = ppo_trainer.generate(question_tensors, return_prompt=False,
                                            length_sampler=output_length_sampler, do_sample=True, top_p=0.95)
    batch["response"] = tokenizer.batch_decode(response_tensors, skip_special_tokens=True)
    texts = [q + r for q, r in zip(batch["query"], batch["response"])]
    rewards = [torch.tensor(-abs(len(t) - 200) / 200.0) for t in texts]
    stats = ppo_trainer.step(question_tensors, response_tensors, rewards)
    ppo_trainer.log_stats(stats, batch, rewards)
    if epoch % 10 == 0:
        ppo_trainer.save_pretrained(f"checkpoints/step_{epoch}")
