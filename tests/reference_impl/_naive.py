"""Naive references for the engine tests: full ``[N, V]`` logits, ordinary autograd.

``naive_stats`` is the oracle for every engine test: it projects with the caller's dtype (``compute`` = bf16 gives
the naive bf16 path a model's own ``lm_head`` takes; fp32/fp64 give the exact reference) and does the softmax in
float64.
"""

from __future__ import annotations

import torch


def naive_stats(hidden, weight, targets, *, bias=None, temperature=1.0, logit_scale=1.0, softcap=None,
                ignore_index=-100, compute=None, stat_dtype=torch.float64):
    compute = compute or weight.dtype
    logits = hidden.to(compute) @ weight.to(compute).t()
    if bias is not None:
        logits = logits + bias.to(compute)
    z = logits.to(stat_dtype) * logit_scale
    if softcap is not None:
        z = softcap * torch.tanh(z / softcap)
    z = z / temperature
    logp_all = torch.log_softmax(z, -1)
    valid = targets != ignore_index
    safe = targets.clamp(min=0)
    return {
        "logp": logp_all.gather(-1, safe.unsqueeze(-1)).squeeze(-1) * valid,
        "entropy": -(logp_all.exp() * logp_all).sum(-1) * valid,
        "argmax_correct": ((z.argmax(-1) == targets) & valid).to(stat_dtype),
        "mean_logit": z.mean(-1) * valid,
        "logsumsq": torch.logsumexp(2 * logp_all, -1) * valid,
    }


def rel_err(a: torch.Tensor, b: torch.Tensor) -> float:
    a, b = a.double(), b.double()
    return ((a - b).norm() / b.norm().clamp(min=1e-30)).item()
