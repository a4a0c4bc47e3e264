"""Distillation / GKD: generalised JSD between student and teacher on top of :func:`chunked_divergence`.

* :func:`distillation_loss` -- from hidden states and LM heads, never building ``[N, V]`` logits (TRL 1.16
  ``DistillationTrainer``'s ``_chunked_divergence_loss``: sum of per-token divergences over the valid completion
  positions divided by their count, or by ``num_items_in_batch``). Metric ``entropy``: the student's mean entropy.
* :func:`jsd_with_hard_loss` -- the combination TRL 1.13's ``trl.losses.FusedLinearJSDLoss`` computes
  (``weight_soft * JSD + weight_hard * CE(labels)``).
* :func:`generalized_jsd_loss` -- the same divergence on full logits (GKD's ``generalized_jsd_loss``), for models
  whose logits already exist and for tests.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ..chunking import chunked_divergence, chunked_logprobs

__all__ = ["distillation_loss", "jsd_with_hard_loss", "generalized_jsd_loss"]


def distillation_loss(
    student_hidden: torch.Tensor,
    student_weight: torch.Tensor,
    teacher_hidden: torch.Tensor,
    teacher_weight: torch.Tensor,
    mask: torch.Tensor,
    *,
    beta: float = 0.5,
    temperature: float = 1.0,
    num_items_in_batch: int | torch.Tensor | None = None,
    student_bias: torch.Tensor | None = None,
    teacher_bias: torch.Tensor | None = None,
    student_logit_scale: float = 1.0,
    teacher_logit_scale: float = 1.0,
    student_softcap: float | None = None,
    teacher_softcap: float | None = None,
    chunk: int | None = None,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Token-level generalised JSD (``beta``: 0 forward KL, 1 reverse KL) averaged over the valid positions.

    Args:
        student_hidden: ``[B, T, H_s]`` (or ``[N, H_s]``); teacher_hidden: ``[B, T, H_t]``; weights ``[V, H]``.
        mask: ``[B, T]`` completion mask (1 = position counts).
        num_items_in_batch: divide the sum by this instead of the local count (gradient accumulation).
    """
    out = chunked_divergence(
        student_hidden,
        student_weight,
        teacher_hidden,
        teacher_weight,
        beta=beta,
        temperature=temperature,
        mask=mask,
        student_bias=student_bias,
        teacher_bias=teacher_bias,
        student_logit_scale=student_logit_scale,
        teacher_logit_scale=teacher_logit_scale,
        student_softcap=student_softcap,
        teacher_softcap=teacher_softcap,
        chunk=chunk,
        outputs=("divergence", "entropy"),
    )
    n_valid = (mask != 0).sum()
    total = out["divergence"].sum()
    if num_items_in_batch is None:
        loss = total / n_valid.clamp(min=1)
    else:
        loss = total / torch.as_tensor(num_items_in_batch, device=total.device)
    entropy = out["entropy"].sum() / n_valid.clamp(min=1)
    return loss, {"entropy": entropy.detach(), "num_tokens": n_valid.detach()}


def jsd_with_hard_loss(
    student_hidden: torch.Tensor,
    student_weight: torch.Tensor,
    teacher_hidden: torch.Tensor,
    teacher_weight: torch.Tensor,
    labels: torch.Tensor,
    *,
    beta: float = 0.5,
    temperature: float = 1.0,
    weight_hard_loss: float = 0.5,
    weight_soft_loss: float = 0.5,
    ignore_index: int = -100,
    student_bias: torch.Tensor | None = None,
    teacher_bias: torch.Tensor | None = None,
    chunk: int | None = None,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """``weight_soft * mean JSD + weight_hard * mean CE(labels)`` over the positions whose label is not
    ``ignore_index`` (Liger / TRL 1.13 ``FusedLinearJSDLoss``; the hard loss uses temperature 1, the soft loss
    ``temperature``). Metrics: ``soft_loss``, ``hard_loss``."""
    labels = labels.reshape(-1)
    valid = labels != ignore_index
    n = valid.sum().clamp(min=1)
    hard = -chunked_logprobs(
        student_hidden, student_weight, labels, bias=student_bias, ignore_index=ignore_index, chunk=chunk
    )["logp"].sum() / n
    soft = chunked_divergence(
        student_hidden,
        student_weight,
        teacher_hidden,
        teacher_weight,
        beta=beta,
        temperature=temperature,
        mask=valid,
        student_bias=student_bias,
        teacher_bias=teacher_bias,
        chunk=chunk,
    )["divergence"].sum() / n
    loss = weight_hard_loss * hard + weight_soft_loss * soft
    return loss, {"soft_loss": soft.detach(), "hard_loss": hard.detach()}


def generalized_jsd_loss(
    student_logits: torch.Tensor,
    teacher_logits: torch.Tensor,
    labels: torch.Tensor | None = None,
    *,
    beta: float = 0.5,
    temperature: float = 1.0,
    reduction: str = "batchmean",
) -> torch.Tensor:
    """GKD's generalised JSD on full logits (https://huggingface.co/papers/2306.13649, TRL ``GKDTrainer``).

    Per position, with ``p_s = softmax(z_s / T)``, ``p_t = softmax(z_t / T)``::

        beta = 0:  KL(p_t || p_s)                                      (forward KL)
        beta = 1:  KL(p_s || p_t)                                      (reverse KL)
        else:      beta * KL(p_t || m) + (1 - beta) * KL(p_s || m),    m = beta p_t + (1 - beta) p_s

    ``labels == -100`` positions are excluded. ``reduction``: ``batchmean`` (sum / number of valid positions when
    ``labels`` is given, else / batch size), ``sum``, ``mean``, or ``none``.
    """
    dtype = torch.promote_types(student_logits.dtype, torch.float32)
    student_log_probs = F.log_softmax(student_logits.to(dtype) / temperature, dim=-1)
    teacher_log_probs = F.log_softmax(teacher_logits.to(dtype) / temperature, dim=-1)
    if beta == 0:
        jsd = F.kl_div(student_log_probs, teacher_log_probs, reduction="none", log_target=True)
    elif beta == 1:
        jsd = F.kl_div(teacher_log_probs, student_log_probs, reduction="none", log_target=True)
    else:
        mixture = torch.logsumexp(
            torch.stack([student_log_probs + math.log(1 - beta), teacher_log_probs + math.log(beta)]), dim=0
        )
        kl_teacher = F.kl_div(mixture, teacher_log_probs, reduction="none", log_target=True)
        kl_student = F.kl_div(mixture, student_log_probs, reduction="none", log_target=True)
        jsd = beta * kl_teacher + (1 - beta) * kl_student
    if labels is not None:
        jsd = jsd[labels != -100]
    if reduction == "batchmean":
        return jsd.sum() / (labels != -100).sum() if labels is not None else jsd.sum() / jsd.size(0)
    if reduction == "sum":
        return jsd.sum()
    if reduction == "mean":
        return jsd.mean()
    return jsd
