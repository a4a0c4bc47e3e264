from trl import GRPOTrainer


class LoggingPPOTrainer(GRPOTrainer):
    # TODO(trl-compat): LoggingPPOTrainer.generate_completions overrides a PPO... [ppo-to-grpo]
    def generate_completions(self, sampling=False):
        print("sampling", sampling)
        return super().generate_completions(sampling)

    # TODO(trl-compat): LoggingPPOTrainer.null_ref_context overrides a PPO trainer... [ppo-to-grpo]
    def null_ref_context(self):
        return super().null_ref_context()

    def log(self, logs, start_time=None):
        super().log(logs, start_time)


# trl-compat: GRPO and Online DPO read text prompts; rebuild them from the PPO-era input_ids
if "prompt" not in ds.column_names:
    ds = ds.with_format(None).map(
        lambda example: {"prompt": tok.decode(example["input_ids"], skip_special_tokens=True)},
        remove_columns=[c for c in ("input_ids", "attention_mask") if c in ds.column_names],
    )

# TODO(trl-compat): the value model `vm` is no longer used [ppo-to-grpo]
trainer = LoggingPPOTrainer(
    model=m,
    reward_funcs=rm,  # noqa: F821
    args=args,
    train_dataset=ds,
    processing_class=tok,
    reward_processing_classes=tok,
)  # noqa: F821
