import torch
from trl.core import logprobs_from_logits, masked_mean, stack_dicts, whiten

logits = torch.randn(2, 3, 5)
labels = torch.randint(0, 5, (2, 3))
lp = logprobs_from_logits(logits, labels)
adv = whiten(lp)
mean = masked_mean(lp, torch.ones_like(lp))
stats = stack_dicts([{"a": torch.tensor([1.0])}])
