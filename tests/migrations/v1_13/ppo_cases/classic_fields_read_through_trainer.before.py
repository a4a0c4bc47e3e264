# the model name is read back through the trainer's config (`ppo_trainer.config.model_name`); a config built as a
# class attribute keeps its marker (a binding in a class body is not visible to the reads)
from trl import AutoModelForCausalLMWithValueHead, PPOConfig, PPOTrainer


class Settings:
    ppo = PPOConfig(model_name=DEFAULTS.model, batch_size=4, mini_batch_size=4)
    label = ppo.model_name


config = PPOConfig(model_name=cli.model, batch_size=4, mini_batch_size=4)
model = AutoModelForCausalLMWithValueHead.from_pretrained(config.model_name)
ppo_trainer = PPOTrainer(config, model, tokenizer=tok, dataset=ds)
print(ppo_trainer.config.model_name, Settings.label)
