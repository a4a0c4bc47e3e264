"""Unpaired preference losses: KTO (TRL 1.16 ``KTOTrainer``) and BCO (TRL 1.13 ``experimental/bco``).

Inputs are per-sequence log-probs ``[B]`` (``sequence_logps`` of the per-token values) and a ``[B]`` bool label
(``True`` = desirable / chosen). Metric names are TRL's: ``kl``, ``rewards/chosen``, ``rewards/rejected``,
``rewards/margins``, ``logps/chosen``, ``logps/rejected`` (means over the examples of each side; absent when the batch
has none), and ``delta`` for BCO.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import torch
import torch.nn.functional as F

__all__ = ["KTO_LOSS_TYPES", "kto_loss", "RunningMoments", "bco_loss", "udm_density_ratio_weights"]

KTO_LOSS_TYPES = ("kto", "apo_zero_unpaired")


def _side_metrics(
    labels: torch.Tensor, rewards: torch.Tensor, logps: torch.Tensor
) -> dict[str, torch.Tensor]:
    metrics: dict[str, torch.Tensor] = {}
    rewards, logps = rewards.detach().float(), logps.detach().float()
    for side, sel in (("chosen", labels), ("rejected", ~labels)):
        if sel.any():
            metrics[f"rewards/{side}"] = rewards[sel].nansum() / sel.sum()
            metrics[f"logps/{side}"] = logps[sel].nansum() / sel.sum()
    if "rewards/chosen" in metrics and "rewards/rejected" in metrics:
        metrics["rewards/margins"] = metrics["rewards/chosen"] - metrics["rewards/rejected"]
    return metrics


def kto_loss(
    policy_logps: torch.Tensor,
    ref_logps: torch.Tensor,
    labels: torch.Tensor,
    *,
    beta: float = 0.1,
    loss_type: str = "kto",
    desirable_weight: float = 1.0,
    undesirable_weight: float = 1.0,
    policy_kl_logps: torch.Tensor | None = None,
    ref_kl_logps: torch.Tensor | None = None,
    kl: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """KTO (https://huggingface.co/papers/2402.01306, Eq. 7) and APO-zero unpaired
    (https://huggingface.co/papers/2408.06266).

    With ``r = log pi(y|x) - log pi_ref(y|x)`` per example (``[B]``)::

        kto, desirable:             lambda_D * (1 - sigmoid(beta * (r - z0)))
        kto, undesirable:           lambda_U * (1 - sigmoid(beta * (z0 - r)))
        apo_zero_unpaired:          1 - sigmoid(beta * r)  /  sigmoid(beta * r)
        z0 = max(0, mean(policy_kl_logps - ref_kl_logps))          (detached)
        loss = nanmean over the batch of the per-example losses

    ``z0`` is the KL estimate from mismatched prompt/completion pairs (or ``kl`` given directly, e.g. already
    averaged across ranks; 0 when neither is given). ``lambda_D, lambda_U`` = ``desirable_weight, undesirable_weight``.
    """
    if loss_type not in KTO_LOSS_TYPES:
        raise ValueError(f"Unknown loss type {loss_type!r}; expected one of {KTO_LOSS_TYPES}")
    labels = labels.to(torch.bool).reshape(-1)
    if kl is None:
        if policy_kl_logps is not None and ref_kl_logps is not None:
            kl = (policy_kl_logps - ref_kl_logps).mean().detach().clamp(min=0)
        else:
            kl = policy_logps.new_zeros(())
    kl = kl.detach().to(policy_logps.dtype)
    logratios = policy_logps - ref_logps.to(policy_logps.dtype)
    chosen_lr, rejected_lr = logratios[labels], logratios[~labels]
    if loss_type == "kto":
        chosen_losses = 1 - torch.sigmoid(beta * (chosen_lr - kl))
        rejected_losses = 1 - torch.sigmoid(beta * (kl - rejected_lr))
    else:
        chosen_losses = 1 - torch.sigmoid(beta * chosen_lr)
        rejected_losses = torch.sigmoid(beta * rejected_lr)
    losses = torch.cat((desirable_weight * chosen_losses, undesirable_weight * rejected_losses), 0)
    loss = losses.nanmean()
    metrics = {"kl": kl.detach().float()}
    metrics.update(_side_metrics(labels, beta * logratios, policy_logps))
    return loss, metrics


@dataclasses.dataclass
class RunningMoments:
    """Running mean / std of a stream (Chan et al. parallel update), BCO's reward baseline ``delta``.

    Same update rule as TRL 1.13's ``experimental.bco.RunningMoments``; ``reduce`` (optional) turns a local batch into
    the global ``(mean, var, count)`` across ranks, for example with ``accelerate``'s ``get_global_statistics``.
    """

    mean: float = 0.0
    std: float = 1.0
    var: float = 1.0
    count: float = 1e-24
    reduce: Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor, int]] | None = dataclasses.field(
        default=None, repr=False, compare=False
    )

    @torch.no_grad()
    def update(self, xs: torch.Tensor) -> tuple[float, float]:
        """Fold a batch in; return the batch's mean and unbiased std."""
        if self.reduce is not None:
            xs_mean, xs_var, xs_count = self.reduce(xs)
        else:
            xs_count = xs.numel()
            xs_var, xs_mean = torch.var_mean(xs, unbiased=False)
        xs_mean, xs_var = xs_mean.float(), xs_var.float()
        delta = xs_mean - self.mean
        tot_count = self.count + xs_count
        new_sum = xs_var * xs_count
        old_sum = self.var * self.count + delta**2 * self.count * xs_count / tot_count
        tot_sum = old_sum + new_sum
        self.mean += (delta * xs_count / tot_count).item()
        new_var = tot_sum / tot_count
        self.std = (new_var * tot_count / (tot_count - 1)).float().sqrt().item()
        self.var = new_var.item()
        self.count = tot_count
        return xs_mean.item(), (xs_var * xs_count / (xs_count - 1)).float().sqrt().item()


def udm_density_ratio_weights(
    prob_desirable: torch.Tensor, *, min_density_ratio: float = 0.5, max_density_ratio: float = 10.0
) -> torch.Tensor:
    """BCO's underlying-distribution-matching weight of undesirable examples: the density ratio
    ``p(desirable | prompt) / p(undesirable | prompt)`` from a prompt classifier, clamped to
    ``[min_density_ratio, max_density_ratio]`` (TRL 1.13 ``BCOTrainer._get_udm_weight``)."""
    return (prob_desirable / (1 - prob_desirable + 1e-8)).clamp(min=min_density_ratio, max=max_density_ratio)


def bco_loss(
    policy_logps: torch.Tensor,
    ref_logps: torch.Tensor,
    labels: torch.Tensor,
    *,
    beta: float = 0.1,
    running: RunningMoments | None = None,
    update_running: bool = True,
    rejected_weights: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Binary Classifier Optimization (https://huggingface.co/papers/2404.04656), per example ``[B]``::

        r = beta * (log pi(y|x) - log pi_ref(y|x))
        desirable:    -log sigmoid(r - delta)
        undesirable:  -w * log sigmoid(-(r - delta))          (w: UDM density ratio, 1 without)
        loss = mean over the batch

    ``delta`` is the running mean of all rewards seen so far (``running``,
    updated with this batch's rewards first when ``update_running``; a fresh :class:`RunningMoments` when ``None``).
    ``rejected_weights`` (``[num_rejected]``, e.g. :func:`udm_density_ratio_weights`) reweights undesirable examples.
    Loss: mean over the batch (chosen first, then rejected, like TRL). Extra metric: ``delta``.
    """
    labels = labels.to(torch.bool).reshape(-1)
    running = RunningMoments() if running is None else running
    rewards = beta * (policy_logps - ref_logps.to(policy_logps.dtype))
    chosen_rewards, rejected_rewards = rewards[labels], rewards[~labels]
    if update_running:
        running.update(torch.cat((chosen_rewards, rejected_rewards), 0).detach())
    delta = torch.as_tensor(running.mean, device=rewards.device)
    chosen_losses = -F.logsigmoid(chosen_rewards - delta)
    rejected_losses = -F.logsigmoid(-(rejected_rewards - delta))
    if rejected_weights is not None:
        rejected_losses = rejected_weights.to(rejected_losses.dtype) * rejected_losses
    loss = torch.cat((chosen_losses, rejected_losses), 0).mean()
    metrics = {"delta": delta.detach().float()}
    metrics.update(_side_metrics(labels, rewards, policy_logps))
    return loss, metrics
