from trl import PPOTrainer


class LoggingPPOTrainer(PPOTrainer):
    def generate_completions(self, sampling=False):
        print("sampling", sampling)
        return super().generate_completions(sampling)

    def null_ref_context(self):
        return super().null_ref_context()

    def log(self, logs, start_time=None):
        super().log(logs, start_time)


trainer = LoggingPPOTrainer(args=args, processing_class=tok, model=m, ref_model=None, reward_model=rm,  # noqa: F821
                            value_model=vm, train_dataset=ds)  # noqa: F821
