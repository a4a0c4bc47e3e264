import torch
from compat.trl import stack_dicts


def logprobs_from_logits(logits, labels, gather=True):
    """trl.core.logprobs_from_logits (removed in TRL 0.14), kept by trl-compat."""
    logp = torch.nn.functional.log_softmax(logits, dim=2)
    if not gather:
        return logp
    return torch.gather(logp, 2, labels.unsqueeze(2)).squeeze(-1)


def masked_mean(values, mask, axis=None):
    """trl.core.masked_mean (removed from TRL), kept by trl-compat."""
    if axis is not None:
        return (values * mask).sum(axis=axis) / mask.sum(axis=axis)
    return (values * mask).sum() / mask.sum()


def whiten(values, shift_mean=True):
    """trl.core.whiten (removed in TRL 0.14), kept by trl-compat."""
    mean, var = torch.mean(values), torch.var(values)
    whitened = (values - mean) * torch.rsqrt(var + 1e-8)
    if not shift_mean:
        whitened += mean
    return whitened


logits = torch.randn(2, 3, 5)
labels = torch.randint(0, 5, (2, 3))
lp = logprobs_from_logits(logits, labels)
adv = whiten(lp)
mean = masked_mean(lp, torch.ones_like(lp))
stats = stack_dicts([{"a": torch.tensor([1.0])}])
