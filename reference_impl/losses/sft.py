"""SFT losses on per-token log-probs: negative log-likelihood and DFT.

Inputs are the per-token log-probs of the target tokens (``chunked_logprobs(...)["logp"]``, 0 at ignored positions)
and a mask of the positions that count. Both losses are ``sum(per_token_loss) / num_tokens`` like TRL 1.16's
``SFTTrainer.compute_loss``: ``num_tokens`` is ``num_items_in_batch`` when given (gradient accumulation across
micro-batches), else the local number of valid tokens, clamped to 1 so an empty batch gives a finite 0.

Metrics use TRL's names: ``entropy`` and ``mean_token_accuracy`` (when the per-token inputs are given) and
``num_tokens`` (valid tokens in this batch).
"""

from __future__ import annotations

import torch

__all__ = ["nll_loss", "dft_loss"]


def _reduce(
    per_token_loss: torch.Tensor,
    mask: torch.Tensor,
    num_items_in_batch: int | torch.Tensor | None,
) -> torch.Tensor:
    mask = mask.to(per_token_loss.dtype)
    num_tokens = mask.sum() if num_items_in_batch is None else num_items_in_batch
    return (per_token_loss * mask).sum() / torch.as_tensor(num_tokens, device=per_token_loss.device).clamp(min=1)


def _token_metrics(
    mask: torch.Tensor, entropy: torch.Tensor | None, is_top1: torch.Tensor | None
) -> dict[str, torch.Tensor]:
    m = mask.float()
    n = m.sum()
    metrics = {"num_tokens": n.detach()}
    denom = n.clamp(min=1)
    if entropy is not None:
        metrics["entropy"] = ((entropy.detach().float() * m).sum() / denom).detach()
    if is_top1 is not None:
        metrics["mean_token_accuracy"] = ((is_top1.detach().float() * m).sum() / denom).detach()
    return metrics


def nll_loss(
    logps: torch.Tensor,
    mask: torch.Tensor,
    *,
    num_items_in_batch: int | torch.Tensor | None = None,
    entropy: torch.Tensor | None = None,
    is_top1: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Token-level negative log-likelihood ``-sum(logp * mask) / num_tokens``.

    Args:
        logps: per-token log-probs of the targets, any shape.
        mask: same shape, 1 where the token counts.
        num_items_in_batch: global token count to divide by (TRL / transformers gradient-accumulation convention).
        entropy, is_top1: optional per-token values for the ``entropy`` / ``mean_token_accuracy`` metrics.
    """
    loss = _reduce(-logps, mask, num_items_in_batch)
    return loss, _token_metrics(mask, entropy, is_top1)


def dft_loss(
    logps: torch.Tensor,
    mask: torch.Tensor,
    *,
    num_items_in_batch: int | torch.Tensor | None = None,
    entropy: torch.Tensor | None = None,
    is_top1: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Dynamic Fine-Tuning (https://huggingface.co/papers/2508.05629): each token's NLL weighted by its (detached)
    probability, ``-sum(logp * exp(logp).detach() * mask) / num_tokens``. Same arguments as :func:`nll_loss`."""
    per_token_loss = -logps * logps.detach().exp()
    loss = _reduce(per_token_loss, mask, num_items_in_batch)
    return loss, _token_metrics(mask, entropy, is_top1)
