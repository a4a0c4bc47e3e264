"""Reward modelling: Bradley-Terry loss on a scalar head (with optional margin and reward centering), and the
step-level cross-entropy of process reward models on a token-classification head.

No LM head, so no chunking: the inputs are the ``[B]`` scores of the chosen and rejected sequences, or the
``[B, T, 2]`` step logits. ``reward_loss`` matches TRL 1.16's ``RewardTrainer.compute_loss``; metric names are TRL's
(``min_reward``, ``mean_reward``, ``max_reward``, ``accuracy``, ``margin``). ``process_reward_loss`` is TRL 1.13's
experimental PRM loss (``reference_impl.trainers.prm``).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = ["process_reward_loss", "reward_loss"]


def reward_loss(
    chosen_scores: torch.Tensor,
    rejected_scores: torch.Tensor,
    *,
    margin: torch.Tensor | None = None,
    center_rewards_coefficient: float | None = None,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Bradley-Terry reward loss (InstructGPT, https://huggingface.co/papers/2203.02155, Eq. 1), with Llama 2's margin
    (https://huggingface.co/papers/2307.09288) and reward centering (https://huggingface.co/papers/2312.09244)::

        loss = -mean_i log sigmoid(r_w,i - r_l,i - margin_i) + c * mean_i (r_w,i + r_l,i)^2

    Args:
        chosen_scores, rejected_scores: ``[B]`` (or ``[B, 1]``) scalar-head outputs.
        margin: optional ``[B]`` margins (Llama-2 style); subtracted inside the sigmoid.
        center_rewards_coefficient: weight of the centering term (Eisenstein et al. 2023), ``None`` disables it.
    """
    chosen = chosen_scores.reshape(-1)
    rejected = rejected_scores.reshape(-1)
    diff = chosen - rejected
    if margin is not None:
        diff = diff - margin.reshape(-1).to(diff.dtype)
    loss = -F.logsigmoid(diff).mean()
    if center_rewards_coefficient is not None:
        loss = loss + center_rewards_coefficient * torch.mean((chosen + rejected) ** 2)
    with torch.no_grad():
        all_rewards = torch.cat([chosen, rejected]).float()
        metrics = {
            "min_reward": all_rewards.min(),
            "mean_reward": all_rewards.mean(),
            "max_reward": all_rewards.max(),
            "accuracy": (chosen > rejected).float().mean(),
            "margin": (chosen - rejected).float().mean(),
        }
    return loss, metrics


def process_reward_loss(
    logits: torch.Tensor, labels: torch.Tensor, *, num_items_in_batch: torch.Tensor | int | None = None
) -> torch.Tensor:
    """Process reward model loss (Lightman et al. 2023, https://huggingface.co/papers/2305.20050; Math-Shepherd,
    https://huggingface.co/papers/2312.08935): cross-entropy of the step labels at the labelled positions::

        loss = -(1 / N) * sum_{t : y_t != -100} log softmax(z_t)[y_t]

    Args:
        logits: ``[B, T, C]`` token-classification logits (upcast to fp32).
        labels: ``[B, T]`` step labels, ``-100`` where there is none.
        num_items_in_batch: ``N``, the labelled positions of the whole optimizer step; ``None``: this batch's.
    """
    flat_logits, flat_labels = logits.float().reshape(-1, logits.shape[-1]), labels.reshape(-1).to(logits.device)
    if num_items_in_batch is None:
        return F.cross_entropy(flat_logits, flat_labels, ignore_index=-100)
    total = F.cross_entropy(flat_logits, flat_labels, ignore_index=-100, reduction="sum")
    return total / torch.as_tensor(num_items_in_batch, device=total.device)
