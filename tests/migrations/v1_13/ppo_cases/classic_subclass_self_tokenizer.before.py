from trl import PPOTrainer


class SentimentPPOTrainer(PPOTrainer):
    """A framework's PPO wrapper: its own loop reads the tokenizer the base class was given."""

    def decode_all(self, tensors):
        return self.tokenizer.batch_decode(tensors)

    def pad_id(self):
        return self.tokenizer.eos_token_id


class OwnTokenizerTrainer(PPOTrainer):
    """Sets its own `self.tokenizer`: left as it is."""

    def __init__(self, tok, **kwargs):
        super().__init__(**kwargs)
        self.tokenizer = tok

    def pad_id(self):
        return self.tokenizer.pad_token_id


def helper(obj):
    return obj.tokenizer  # not a trainer's `self`
