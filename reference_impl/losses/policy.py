"""Policy-gradient losses: the GRPO family (every ``loss_type`` of TRL 1.16's ``GRPOConfig``) and RLOO.

Inputs are per-token log-probs ``[B, T]`` of the sampled completions under the current policy
(``chunked_logprobs(...)["logp"]``), the completion mask, and the advantages. The math follows TRL 1.16
``GRPOTrainer._compute_loss`` / ``RLOOTrainer`` so each variant is a few lines under its paper's name; metric names
are TRL's (``kl``, ``entropy``, ``clip_ratio/low_mean``, ``clip_ratio/low_min``, ``clip_ratio/high_mean``,
``clip_ratio/high_max``, ``clip_ratio/region_mean``, ``cispo_clip_ratio``, ``vespo/phi_seq_mean``).

Normalisation: TRL switches off ``transformers``' gradient-accumulation scaling for GRPO and scales the loss itself;
``gradient_accumulation_steps``, ``num_processes``, ``steps_per_generation`` and ``training`` reproduce that (their
defaults give the plain per-batch loss).
"""

from __future__ import annotations

import math

import torch

__all__ = [
    "GRPO_LOSS_TYPES",
    "vespo_gamma_weights",
    "off_policy_mask",
    "grpo_loss",
    "rloo_advantages",
    "rloo_loss",
]

GRPO_LOSS_TYPES = ("grpo", "dr_grpo", "dapo", "bnpo", "cispo", "sapo", "luspo", "vespo")


@torch.no_grad()
def vespo_gamma_weights(
    advantages: torch.Tensor,
    log_ratio_per_token: torch.Tensor,
    mask: torch.Tensor,
    importance_sampling_ratio: torch.Tensor | None = None,
    *,
    k_pos: float = 2.0,
    lambda_pos: float = 3.0,
    k_neg: float = 3.0,
    lambda_neg: float = 2.0,
) -> torch.Tensor:
    """VESPO's sequence weight ``phi(w) = exp(lambda) * w^k * exp(-lambda * w)`` (``phi(1) = 1``), ``[B, 1]``.

    ``w`` is the sequence importance ratio ``prod_t pi/pi_old`` (times the vLLM correction when given), computed in
    log space with TRL's clamps; ``(k, lambda)`` depend on the sign of the advantage. Detached: a gradient scale only.
    """
    lower_clamp = math.log(1e-8)
    seq_log_ratio = torch.sum(torch.clamp(log_ratio_per_token, -20.0, 20.0) * mask, dim=-1, keepdim=True)
    if importance_sampling_ratio is not None:
        log_is = torch.clamp(torch.log(importance_sampling_ratio), lower_clamp, 20.0)
        seq_log_ratio = seq_log_ratio + torch.sum(log_is, dim=-1, keepdim=True)
    log_w = torch.clamp(seq_log_ratio, lower_clamp, 20.0)
    w = torch.exp(log_w)
    nonneg = advantages >= 0
    k = torch.where(nonneg, k_pos, k_neg)
    lam = torch.where(nonneg, lambda_pos, lambda_neg).clamp(min=1e-4)
    return torch.exp(lam + k * log_w - lam * w).nan_to_num(nan=0.0, posinf=0.0, neginf=0.0)


def off_policy_mask(
    advantages: torch.Tensor,
    per_token_logps: torch.Tensor,
    sampling_per_token_logps: torch.Tensor,
    mask: torch.Tensor,
    threshold: float,
) -> torch.Tensor:
    """DeepSeek-V3.2's off-policy sequence mask, ``[B, 1]``: keep a sequence when its advantage is >= 0 or its mean
    token KL ``log pi_sampler - log pi`` is <= ``threshold`` (NaN tokens count as 0)."""
    kl = torch.nan_to_num(sampling_per_token_logps - per_token_logps.detach(), nan=0.0)
    avg = (kl * mask).sum(dim=1, keepdim=True) / mask.sum(dim=1, keepdim=True).clamp(min=1.0)
    return ((advantages >= 0) | (avg <= threshold)).to(mask.dtype)


def _masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    if x.shape[1] == 1:  # one value per sequence (sequence-level importance sampling)
        return x.float().mean()
    return (x * mask).sum() / mask.sum().clamp(min=1.0)


def _seq_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    if x.shape[1] == 1:
        return x.squeeze(1)
    return (x * mask).sum(-1) / mask.sum(-1)


def grpo_loss(
    per_token_logps: torch.Tensor,
    mask: torch.Tensor,
    advantages: torch.Tensor,
    *,
    old_per_token_logps: torch.Tensor | None = None,
    ref_per_token_logps: torch.Tensor | None = None,
    loss_type: str = "dapo",
    beta: float = 0.0,
    epsilon: float = 0.2,
    epsilon_high: float | None = None,
    delta: float | None = None,
    importance_sampling_level: str = "token",
    use_bias_correction_kl: bool = False,
    importance_sampling_ratio: torch.Tensor | None = None,
    sapo_temperature_pos: float = 1.0,
    sapo_temperature_neg: float = 1.05,
    vespo_k_pos: float = 2.0,
    vespo_lambda_pos: float = 3.0,
    vespo_k_neg: float = 3.0,
    vespo_lambda_neg: float = 2.0,
    max_completion_length: int | None = None,
    num_items_in_batch: int | torch.Tensor | None = None,
    off_policy_mask_threshold: float | None = None,
    sampling_per_token_logps: torch.Tensor | None = None,
    entropies: torch.Tensor | None = None,
    entropy_mask: torch.Tensor | None = None,
    entropy_coef: float = 0.0,
    gradient_accumulation_steps: int = 1,
    num_processes: int = 1,
    steps_per_generation: int = 1,
    training: bool = True,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """GRPO and its variants (TRL 1.16 ``GRPOTrainer._compute_loss``).

    Args:
        per_token_logps: ``[B, T]`` current-policy log-probs (differentiable).
        mask: ``[B, T]`` completion (times tool) mask.
        advantages: ``[B]`` or ``[B, T]``.
        old_per_token_logps: log-probs of the policy that sampled (``None``: on-policy, ``per_token_logps.detach()``).
        ref_per_token_logps: reference log-probs, needed when ``beta != 0`` (k3 KL estimator).
        loss_type: one of :data:`GRPO_LOSS_TYPES`. ``grpo``/``sapo``: per-sequence token mean, then batch mean;
            ``bnpo``: token mean over the batch; ``dr_grpo``: token sum / (B * max_completion_length);
            ``dapo``/``cispo``/``vespo``: token sum / ``num_items_in_batch`` (global token count of the generation
            batch); ``luspo``: per-sequence token sum, batch mean.
        epsilon, epsilon_high: PPO clip range ``[1 - epsilon, 1 + epsilon_high]`` (CISPO: ``epsilon_high`` is its
            upper truncation ``eps_max``). ``delta``: INTELLECT-2 two-sided clipping upper bound.
        importance_sampling_level: ``token`` or ``sequence`` (GSPO: mean token log-ratio per sequence).
        use_bias_correction_kl: multiply the KL term by the importance ratio (DeepSeek-V3.2).
        importance_sampling_ratio: vLLM truncated-IS correction ``[B, T]`` (or ``[B, 1]``), applied to the policy term
            (for ``vespo`` it enters the gamma weights instead).
        off_policy_mask_threshold, sampling_per_token_logps: off-policy sequence masking (see :func:`off_policy_mask`).
        entropies, entropy_mask, entropy_coef: per-token entropies (metric ``entropy``; with ``entropy_coef`` the
            entropy bonus ``- coef * mean entropy``), and the high-entropy token mask of ``top_entropy_quantile``.
    """
    if loss_type not in GRPO_LOSS_TYPES:
        raise ValueError(f"Unknown loss type {loss_type!r}; expected one of {GRPO_LOSS_TYPES}")
    epsilon_low = epsilon
    epsilon_high = epsilon if epsilon_high is None else epsilon_high
    mask = mask.to(per_token_logps.dtype)
    if advantages.dim() == 1:
        advantages = advantages.unsqueeze(1)
    old = per_token_logps.detach() if old_per_token_logps is None else old_per_token_logps

    if off_policy_mask_threshold is not None:
        sampling = old if sampling_per_token_logps is None else sampling_per_token_logps
        opm = off_policy_mask(advantages, per_token_logps, sampling, mask, off_policy_mask_threshold)

    log_ratio = per_token_logps - old
    if importance_sampling_level == "token":
        log_iw = log_ratio
    elif importance_sampling_level == "sequence":  # GSPO, https://huggingface.co/papers/2507.18071
        log_iw = ((log_ratio * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)).unsqueeze(-1)
    else:
        raise ValueError(f"Unknown importance_sampling_level {importance_sampling_level!r}; expected token/sequence")
    coef_1 = torch.exp(log_iw)

    if beta != 0.0:
        if ref_per_token_logps is None:
            raise ValueError("beta != 0 needs ref_per_token_logps")
        # k3 estimator of KL(pi || pi_ref), http://joschu.net/blog/kl-approx.html
        per_token_kl = torch.exp(ref_per_token_logps - per_token_logps) - (ref_per_token_logps - per_token_logps) - 1
        if use_bias_correction_kl:
            per_token_kl = per_token_kl * coef_1

    metrics: dict[str, torch.Tensor] = {}
    if loss_type == "cispo":  # CISPO, https://huggingface.co/papers/2506.13585: REINFORCE with clipped IS weight
        per_token_loss = -torch.clamp(coef_1, max=epsilon_high).detach() * advantages * per_token_logps
    elif loss_type in ("grpo", "bnpo", "dr_grpo", "dapo", "luspo"):  # PPO clipped surrogate
        coef_2 = torch.clamp(coef_1, 1 - epsilon_low, 1 + epsilon_high)
        if delta is not None:  # INTELLECT-2, https://huggingface.co/papers/2505.07291
            coef_1 = torch.clamp(coef_1, max=delta)
        per_token_loss = -torch.min(coef_1 * advantages, coef_2 * advantages)
    elif loss_type == "sapo":  # SAPO, https://huggingface.co/papers/2511.20347: soft sigmoid gate instead of clip
        temps = torch.where(advantages > 0, sapo_temperature_pos, sapo_temperature_neg)
        per_token_loss = -(torch.sigmoid(temps * (coef_1 - 1)) * 4 / temps) * advantages
    else:  # "vespo"
        phi_seq = vespo_gamma_weights(
            advantages,
            log_ratio,
            mask,
            importance_sampling_ratio,
            k_pos=vespo_k_pos,
            lambda_pos=vespo_lambda_pos,
            k_neg=vespo_k_neg,
            lambda_neg=vespo_lambda_neg,
        )
        per_token_loss = -phi_seq * advantages * per_token_logps

    if off_policy_mask_threshold is not None:
        per_token_loss = per_token_loss * opm
    if entropy_mask is not None:
        per_token_loss = per_token_loss * entropy_mask
    if importance_sampling_ratio is not None and loss_type != "vespo":
        per_token_loss = per_token_loss * importance_sampling_ratio
    if beta != 0.0:
        per_token_loss = per_token_loss + beta * per_token_kl

    accum = gradient_accumulation_steps if training else 1.0
    if loss_type in ("grpo", "sapo"):
        loss = ((per_token_loss * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)).mean()
        policy_loss, loss = loss.detach(), loss / accum
    elif loss_type == "bnpo":
        loss = (per_token_loss * mask).sum() / mask.sum().clamp(min=1.0)
        policy_loss, loss = loss.detach(), loss / accum
    elif loss_type == "dr_grpo":
        if max_completion_length is None:
            max_completion_length = per_token_loss.size(1)
        loss = (per_token_loss * mask).sum() / (per_token_loss.size(0) * max_completion_length)
        policy_loss, loss = loss.detach(), loss / accum
    elif loss_type in ("cispo", "dapo", "vespo"):
        n = mask.sum() if num_items_in_batch is None else num_items_in_batch
        normalizer = torch.as_tensor(n, device=mask.device, dtype=torch.float32).clamp(min=1.0) / num_processes
        if training:
            normalizer = normalizer * gradient_accumulation_steps / steps_per_generation
        loss = (per_token_loss * mask).sum() / normalizer
        policy_loss = loss.detach()
    else:  # "luspo"
        loss = (per_token_loss * mask).sum(-1).mean()
        policy_loss, loss = loss.detach(), loss / accum

    if entropy_coef != 0.0:
        if entropies is None:
            raise ValueError("entropy_coef != 0 needs the per-token entropies")
        eff = mask if entropy_mask is None else mask * entropy_mask
        entropy_loss = (entropies * eff).sum() / eff.sum().clamp(min=1.0) / accum
        loss = loss - entropy_coef * entropy_loss
        metrics["policy_loss"] = policy_loss

    if beta != 0.0:
        metrics["kl"] = _masked_mean(per_token_kl.detach(), mask)
    if entropies is not None:
        metrics["entropy"] = _masked_mean(entropies.detach(), mask)
    with torch.no_grad():
        if loss_type in ("grpo", "bnpo", "dr_grpo", "dapo", "luspo"):
            low = ((coef_1 < 1 - epsilon_low) & (advantages < 0)).float()
            high = ((coef_1 > 1 + epsilon_high) & (advantages > 0)).float()
            region = ((low + high) > 0).float()
            metrics["clip_ratio/low_mean"] = _masked_mean(low, mask)
            metrics["clip_ratio/high_mean"] = _masked_mean(high, mask)
            metrics["clip_ratio/region_mean"] = _masked_mean(region, mask)
            metrics["clip_ratio/low_min"] = _nan_reduce(_seq_mean(low, mask), torch.amin)
            metrics["clip_ratio/high_max"] = _nan_reduce(_seq_mean(high, mask), torch.amax)
        elif loss_type == "cispo":
            metrics["cispo_clip_ratio"] = _masked_mean(((coef_1 > epsilon_high) & (advantages > 0)).float(), mask)
        elif loss_type == "vespo":
            metrics["vespo/phi_seq_mean"] = _masked_mean(phi_seq, mask)
    return loss, metrics


def _nan_reduce(x: torch.Tensor, op) -> torch.Tensor:
    finite = x[~torch.isnan(x)]
    return op(finite) if finite.numel() else torch.tensor(float("nan"), device=x.device)


def rloo_advantages(
    rewards: torch.Tensor,
    num_generations: int,
    *,
    beta: float = 0.0,
    old_per_token_logps: torch.Tensor | None = None,
    ref_per_token_logps: torch.Tensor | None = None,
    mask: torch.Tensor | None = None,
    normalize_advantages: bool = False,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """RLOO's leave-one-out advantages (https://huggingface.co/papers/2402.14740), TRL 1.16 ``RLOOTrainer``.

    With ``beta != 0`` the KL penalty goes into the reward, per sequence: ``r - beta * sum_t (log pi_old - log
    pi_ref)`` (first-order log-ratio estimator, can be negative per token). Rewards are grouped by
    ``num_generations`` consecutive completions of one prompt; the baseline of each is the mean of its siblings'
    rewards (NaN rewards = unscorable, excluded from baselines, advantage 0). Metric ``kl``: mean token KL.
    """
    metrics: dict[str, torch.Tensor] = {}
    rewards = rewards.clone()
    if beta != 0.0:
        if old_per_token_logps is None or ref_per_token_logps is None or mask is None:
            raise ValueError("beta != 0 needs old_per_token_logps, ref_per_token_logps and mask")
        per_token_kl = old_per_token_logps - ref_per_token_logps
        rewards = rewards - beta * (per_token_kl * mask).sum(-1)
        metrics["kl"] = ((per_token_kl * mask).sum() / mask.sum().clamp(min=1.0)).detach()
    grouped = rewards.view(-1, num_generations)
    if num_generations > 1:
        counts = (~torch.isnan(grouped)).sum(dim=1, keepdim=True)
        total = torch.nansum(grouped, dim=1, keepdim=True)
        advantages = rewards - ((total - grouped) / (counts - 1)).view(-1)
    else:
        advantages = torch.zeros_like(rewards)
    if normalize_advantages:
        finite = advantages[~torch.isnan(advantages)]
        std = finite.std() if finite.numel() > 1 else torch.full((), float("nan"), device=advantages.device)
        advantages = (advantages - torch.nanmean(advantages)) / (std + 1e-4)
    return torch.nan_to_num(advantages, nan=0.0), metrics


def rloo_loss(
    per_token_logps: torch.Tensor,
    mask: torch.Tensor,
    advantages: torch.Tensor,
    old_logps: torch.Tensor,
    *,
    epsilon: float = 0.2,
    epsilon_high: float | None = None,
    entropies: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """RLOO's sequence-level clipped surrogate (TRL 1.16 ``RLOOTrainer._compute_loss``).

    ``ratio = exp(sum_t logp - old_logps)`` per sequence (``old_logps``: ``[B]`` sums under the sampling policy);
    ``loss = mean(-min(ratio * A, clip(ratio, 1 - eps, 1 + eps_high) * A))``.
    """
    epsilon_high = epsilon if epsilon_high is None else epsilon_high
    mask = mask.to(per_token_logps.dtype)
    logps = (per_token_logps * mask).sum(1)
    coef_1 = torch.exp(logps - old_logps)
    coef_2 = torch.clamp(coef_1, 1 - epsilon, 1 + epsilon_high)
    loss = (-torch.min(coef_1 * advantages, coef_2 * advantages)).mean()
    metrics: dict[str, torch.Tensor] = {}
    if entropies is not None:
        metrics["entropy"] = ((entropies.detach() * mask).sum() / mask.sum().clamp(min=1.0)).float()
    with torch.no_grad():
        low = ((coef_1 < 1 - epsilon) & (advantages < 0)).float()
        high = ((coef_1 > 1 + epsilon_high) & (advantages > 0)).float()
        region = ((low + high) > 0).float()
        metrics["clip_ratio/low_mean"] = low.nanmean()
        metrics["clip_ratio/low_min"] = _nan_reduce(low, torch.amin)
        metrics["clip_ratio/high_mean"] = high.nanmean()
        metrics["clip_ratio/high_max"] = _nan_reduce(high, torch.amax)
        metrics["clip_ratio/region_mean"] = region.nanmean()
    return loss, metrics
