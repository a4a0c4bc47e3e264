"""Reward modelling on a scalar head: Bradley-Terry loss with optional margin and reward centering.

No LM head, so no chunking: the inputs are the ``[B]`` scores of the chosen and rejected sequences. Matches TRL
1.16's ``RewardTrainer.compute_loss``; metric names are TRL's (``min_reward``, ``mean_reward``, ``max_reward``,
``accuracy``, ``margin``).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = ["reward_loss"]


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
