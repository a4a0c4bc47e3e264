from trl import GRPOTrainer


class SentimentPPOTrainer(GRPOTrainer):
    """A framework's PPO wrapper: its own loop reads the tokenizer the base class was given."""

    def decode_all(self, tensors):
        return self.processing_class.batch_decode(tensors)

    def pad_id(self):
        return self.processing_class.eos_token_id


class OwnTokenizerTrainer(GRPOTrainer):
    """Sets its own `self.tokenizer`: left as it is."""

    def __init__(self, tok, **kwargs):
        # TODO(trl-compat): OwnTokenizerTrainer forwards *args/**kwargs [ppo-to-grpo]
        super().__init__(**kwargs)
        self.tokenizer = tok

    def pad_id(self):
        return self.tokenizer.pad_token_id


def helper(obj):
    return obj.tokenizer  # not a trainer's `self`
