class PPOTrainer:
    def __init__(self, config, model):
        self.config = config


class PPOConfig:
    pass


trainer = PPOTrainer(PPOConfig(), None)
trainer.step = None
