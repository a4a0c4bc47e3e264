"""Policy-gradient losses: the GRPO family (every ``loss_type`` of TRL 1.16's ``GRPOConfig``), RLOO and A*-PO.

Inputs are per-token log-probs ``[B, T]`` of the sampled completions under the current policy
(``chunked_logprobs(...)["logp"]``), the completion mask ``[B, T]``, and the advantages ``[B]`` (or ``[B, T]``).
The math follows TRL 1.16 ``GRPOTrainer._compute_loss`` / ``RLOOTrainer`` / ``experimental.a2po``; metric names are
TRL's (``kl``, ``entropy``, ``clip_ratio/low_mean``, ``clip_ratio/low_min``, ``clip_ratio/high_mean``,
``clip_ratio/high_max``, ``clip_ratio/region_mean``, ``cispo_clip_ratio``, ``vespo/phi_seq_mean``).

The pieces, each written once:

* :func:`clipped_surrogate` -- PPO's clipped objective, shared by GRPO (token or sequence ratio), RLOO (sequence
  ratio) and the TRL 1.13 ``FusedLinearGRPOLoss`` adapter.
* :func:`policy_per_token_loss` -- the per-token policy term of every GRPO ``loss_type`` (PPO clip, CISPO, SAPO,
  VESPO), shared by :func:`grpo_loss` and the 1.13 adapter (which only reduce differently).
* :func:`grpo_loss` -- policy term + k3 KL + masks + the ``loss_type``'s reduction.

Normalisation: TRL switches off ``transformers``' gradient-accumulation scaling for GRPO and scales the loss itself;
``gradient_accumulation_steps``, ``num_processes``, ``steps_per_generation`` and ``training`` reproduce that (their
defaults give the plain per-batch loss).
"""

from __future__ import annotations

import math

import torch

__all__ = [
    "GRPO_LOSS_TYPES",
    "PPO_CLIP_LOSS_TYPES",
    "clipped_surrogate",
    "k3_kl",
    "log_importance_weights",
    "policy_per_token_loss",
    "vespo_gamma_weights",
    "off_policy_mask",
    "grpo_loss",
    "rloo_advantages",
    "rloo_loss",
    "optimal_value",
    "a2po_loss",
]

GRPO_LOSS_TYPES = ("grpo", "dr_grpo", "dapo", "bnpo", "cispo", "sapo", "luspo", "vespo")
#: the GRPO loss types whose policy term is PPO's clipped surrogate (they differ only in the reduction)
PPO_CLIP_LOSS_TYPES = ("grpo", "bnpo", "dr_grpo", "dapo", "luspo")


def clipped_surrogate(
    ratio: torch.Tensor,
    advantages: torch.Tensor,
    epsilon_low: float,
    epsilon_high: float,
    *,
    delta: float | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """PPO's clipped surrogate, as a loss (PPO, Schulman et al. 2017, https://arxiv.org/abs/1707.06347, Eq. 7).

    Formula (``r`` = importance ratio ``pi / pi_old``, ``A`` = advantage)::

        loss = -min(r * A, clip(r, 1 - epsilon_low, 1 + epsilon_high) * A)

    DAPO's clip-higher (https://huggingface.co/papers/2503.14476) is ``epsilon_high != epsilon_low``.
    ``delta`` (INTELLECT-2, https://huggingface.co/papers/2505.07291) additionally caps the *unclipped*
    ratio, ``r -> min(r, delta)``, so a huge ratio with a negative advantage cannot blow up the loss.

    Args:
        ratio: ``[B, T]`` per-token ratio (GRPO), ``[B, 1]`` per-sequence ratio (GSPO) or ``[B]`` (RLOO).
        advantages: broadcastable to ``ratio``.

    Returns:
        ``(loss, low_clipped, high_clipped)``, all of the broadcast shape: the per-element loss, and where the clip
        is active (``r < 1 - epsilon_low`` with ``A < 0``; ``r > 1 + epsilon_high`` with ``A > 0``; ``r`` after the
        ``delta`` cap), bool, for TRL's ``clip_ratio/*`` metrics.
    """
    clipped = torch.clamp(ratio, 1 - epsilon_low, 1 + epsilon_high)
    unclipped = ratio if delta is None else torch.clamp(ratio, max=delta)
    loss = -torch.min(unclipped * advantages, clipped * advantages)
    with torch.no_grad():
        # on the delta-capped ratio, as TRL 1.16 does (1.13 used the uncapped one; equal unless delta <= 1 + eps_high)
        low_clipped = (unclipped < 1 - epsilon_low) & (advantages < 0)
        high_clipped = (unclipped > 1 + epsilon_high) & (advantages > 0)
    return loss, low_clipped, high_clipped


def k3_kl(per_token_logps: torch.Tensor, ref_per_token_logps: torch.Tensor) -> torch.Tensor:
    """Schulman's k3 estimator of ``KL(pi || pi_ref)`` per token (http://joschu.net/blog/kl-approx.html; GRPO,
    https://huggingface.co/papers/2402.03300, Eq. 4)::

        kl = exp(logp_ref - logp) - (logp_ref - logp) - 1          (>= 0, unbiased)
    """
    d = ref_per_token_logps - per_token_logps
    return torch.exp(d) - d - 1


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
    """VESPO's gamma-shaped sequence weight (https://huggingface.co/papers/2602.10693), ``[B, 1]``::

        phi(w) = exp(lambda) * w^k * exp(-lambda * w)          (phi(1) = 1; (k, lambda) by the sign of A)

    ``w`` is the sequence importance ratio ``prod_t pi/pi_old`` (times the vLLM correction when given), computed in
    log space with TRL's clamps. Detached: a gradient scale only.
    """
    lower_clamp = math.log(1e-8)
    # [B, T] -> [B, 1]: log w = sum_t log(pi / pi_old)
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
    """DeepSeek-V3.2's off-policy sequence mask (https://huggingface.co/papers/2512.02556), ``[B, 1]``::

        keep = (A >= 0) or mean_t(log pi_sampler - log pi) <= threshold          (NaN tokens count as 0)
    """
    kl = torch.nan_to_num(sampling_per_token_logps - per_token_logps.detach(), nan=0.0)
    avg = (kl * mask).sum(dim=1, keepdim=True) / mask.sum(dim=1, keepdim=True).clamp(min=1.0)
    return ((advantages >= 0) | (avg <= threshold)).to(mask.dtype)


def log_importance_weights(log_ratio: torch.Tensor, mask: torch.Tensor, level: str) -> torch.Tensor:
    """``log r``: per token (``level="token"``, ``[B, T]``) or per sequence (``level="sequence"``, ``[B, T] -> [B, 1]``;
    GSPO, https://huggingface.co/papers/2507.18071), the sequence ratio being the geometric mean of the token ratios::

        log r_i = (1 / |y_i|) * sum_t log(pi(y_it) / pi_old(y_it))
    """
    if level == "token":
        return log_ratio
    if level == "sequence":
        return ((log_ratio * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)).unsqueeze(-1)
    raise ValueError(f"Unknown importance_sampling_level {level!r}; expected 'token' or 'sequence'")


def policy_per_token_loss(
    loss_type: str,
    per_token_logps: torch.Tensor,
    log_ratio: torch.Tensor,
    log_importance_weights: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    epsilon_low: float,
    epsilon_high: float,
    delta: float | None = None,
    sapo_temperature_pos: float = 1.0,
    sapo_temperature_neg: float = 1.05,
    importance_sampling_ratio: torch.Tensor | None = None,
    vespo_k_pos: float = 2.0,
    vespo_lambda_pos: float = 3.0,
    vespo_k_neg: float = 3.0,
    vespo_lambda_neg: float = 2.0,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """The per-token policy term of a GRPO ``loss_type`` (before masks, KL and reduction).

    With ``r = exp(log_importance_weights)`` (per token, or ``[B, 1]`` per sequence for GSPO) and ``A``::

        grpo, bnpo, dr_grpo, dapo, luspo:  clipped_surrogate(r, A, epsilon_low, epsilon_high, delta)
        cispo (CISPO, https://huggingface.co/papers/2506.13585):  -sg(min(r, epsilon_high)) * A * logp
        sapo  (SAPO, https://huggingface.co/papers/2511.20347):  -(4 / tau) * sigmoid(tau * (r - 1)) * A,
              tau = sapo_temperature_pos if A > 0 else sapo_temperature_neg
        vespo (https://huggingface.co/papers/2602.10693):  -sg(phi(w)) * A * logp,
              phi from :func:`vespo_gamma_weights` on ``log_ratio``

    ``sg`` = stop-gradient. Args are ``[B, T]`` (``advantages`` ``[B, 1]`` or ``[B, T]``). Returns the ``[B, T]``
    (or ``[B, 1]``-broadcast) loss and what the metrics need: ``low_clipped`` / ``high_clipped`` (PPO clip),
    ``cispo_clipped``, or ``phi_seq`` (VESPO).
    """
    ratio = torch.exp(log_importance_weights)
    if loss_type in PPO_CLIP_LOSS_TYPES:
        loss, low, high = clipped_surrogate(ratio, advantages, epsilon_low, epsilon_high, delta=delta)
        return loss, {"low_clipped": low, "high_clipped": high}
    if loss_type == "cispo":
        loss = -torch.clamp(ratio, max=epsilon_high).detach() * advantages * per_token_logps
        return loss, {"cispo_clipped": ((ratio > epsilon_high) & (advantages > 0)).detach()}
    if loss_type == "sapo":
        tau = torch.where(advantages > 0, sapo_temperature_pos, sapo_temperature_neg)
        return -(torch.sigmoid(tau * (ratio - 1)) * 4 / tau) * advantages, {}
    if loss_type == "vespo":
        phi_seq = vespo_gamma_weights(
            advantages, log_ratio, mask, importance_sampling_ratio,
            k_pos=vespo_k_pos, lambda_pos=vespo_lambda_pos, k_neg=vespo_k_neg, lambda_neg=vespo_lambda_neg,
        )
        return -phi_seq * advantages * per_token_logps, {"phi_seq": phi_seq}
    raise ValueError(f"Unknown loss type {loss_type!r}; expected one of {GRPO_LOSS_TYPES}")


def _masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    if x.shape[1] == 1:  # one value per sequence (sequence-level importance sampling)
        return x.float().mean()
    return (x * mask).sum() / mask.sum().clamp(min=1.0)


def _seq_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    if x.shape[1] == 1:
        return x.squeeze(1)
    return (x * mask).sum(-1) / mask.sum(-1)


def _nan_reduce(x: torch.Tensor, op) -> torch.Tensor:
    finite = x[~torch.isnan(x)]
    return op(finite) if finite.numel() else torch.tensor(float("nan"), device=x.device)


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

    GRPO (https://huggingface.co/papers/2402.03300, Eq. 3), per token ``t`` of completion ``i``::

        l_it = policy_per_token_loss(r_it, A_i) * opm_i * entropy_mask_it * is_ratio_it + beta * k3_kl_it
        r_it = pi(y_it) / pi_old(y_it)                        (token level)
             = exp(mean_t log(pi / pi_old))                   (sequence level, GSPO 2507.18071)
        k3_kl_it *= r_it                                      (use_bias_correction_kl, DeepSeek-V3.2)

    Reduction by ``loss_type`` (``m`` = mask, ``L_i = sum_t m_it``)::

        grpo, sapo:        mean_i (sum_t l_it m_it / L_i)
        bnpo:              sum_it l_it m_it / sum_it m_it
        dr_grpo:           sum_it l_it m_it / (B * max_completion_length)       (Dr. GRPO 2503.20783)
        dapo, cispo, vespo: sum_it l_it m_it / num_items_in_batch               (DAPO 2503.14476)
        luspo:             mean_i (sum_t l_it m_it)                          (LUSPO 2602.05261)
    then ``- entropy_coef * mean entropy``.

    Args:
        per_token_logps: ``[B, T]`` current-policy log-probs (differentiable).
        mask: ``[B, T]`` completion (times tool) mask.
        advantages: ``[B]`` or ``[B, T]``.
        old_per_token_logps: log-probs of the policy that sampled (``None``: on-policy, ``per_token_logps.detach()``).
        ref_per_token_logps: reference log-probs, needed when ``beta != 0`` (k3 KL estimator).
        loss_type: one of :data:`GRPO_LOSS_TYPES`.
        epsilon, epsilon_high: PPO clip range ``[1 - epsilon, 1 + epsilon_high]`` (CISPO: ``epsilon_high`` is its
            upper truncation ``eps_max``). ``delta``: INTELLECT-2 two-sided clipping upper bound.
        importance_sampling_level: ``token`` or ``sequence`` (GSPO).
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
        advantages = advantages.unsqueeze(1)  # [B] -> [B, 1], broadcast over tokens
    old = per_token_logps.detach() if old_per_token_logps is None else old_per_token_logps

    if off_policy_mask_threshold is not None:
        sampling = old if sampling_per_token_logps is None else sampling_per_token_logps
        opm = off_policy_mask(advantages, per_token_logps, sampling, mask, off_policy_mask_threshold)  # [B, 1]

    log_ratio = per_token_logps - old  # [B, T]
    log_iw = log_importance_weights(log_ratio, mask, importance_sampling_level)  # [B, T] or [B, 1]

    if beta != 0.0:
        if ref_per_token_logps is None:
            raise ValueError("beta != 0 needs ref_per_token_logps")
        per_token_kl = k3_kl(per_token_logps, ref_per_token_logps)
        if use_bias_correction_kl:
            per_token_kl = per_token_kl * torch.exp(log_iw)

    per_token_loss, extras = policy_per_token_loss(
        loss_type, per_token_logps, log_ratio, log_iw, advantages, mask,
        epsilon_low=epsilon_low, epsilon_high=epsilon_high, delta=delta,
        sapo_temperature_pos=sapo_temperature_pos, sapo_temperature_neg=sapo_temperature_neg,
        importance_sampling_ratio=importance_sampling_ratio,
        vespo_k_pos=vespo_k_pos, vespo_lambda_pos=vespo_lambda_pos, vespo_k_neg=vespo_k_neg,
        vespo_lambda_neg=vespo_lambda_neg,
    )
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

    metrics: dict[str, torch.Tensor] = {}
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
    if "low_clipped" in extras:
        low, high = extras["low_clipped"].float(), extras["high_clipped"].float()
        region = ((low + high) > 0).float()
        metrics["clip_ratio/low_mean"] = _masked_mean(low, mask)
        metrics["clip_ratio/high_mean"] = _masked_mean(high, mask)
        metrics["clip_ratio/region_mean"] = _masked_mean(region, mask)
        metrics["clip_ratio/low_min"] = _nan_reduce(_seq_mean(low, mask), torch.amin)
        metrics["clip_ratio/high_max"] = _nan_reduce(_seq_mean(high, mask), torch.amax)
    elif "cispo_clipped" in extras:
        metrics["cispo_clip_ratio"] = _masked_mean(extras["cispo_clipped"].float(), mask)
    elif "phi_seq" in extras:
        metrics["vespo/phi_seq_mean"] = _masked_mean(extras["phi_seq"], mask)
    return loss, metrics


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

    For completion ``i`` of a prompt's group of ``k = num_generations``::

        r_i <- r_i - beta * sum_t (log pi_old - log pi_ref)_it         (KL in the reward, first-order estimator)
        A_i  = r_i - 1/(k - 1) * sum_{j != i} r_j
        A   <- (A - mean(A)) / (std(A) + 1e-4)                          (normalize_advantages)

    Rewards ``[B]`` are grouped by ``num_generations`` consecutive completions; NaN rewards (unscorable) are left out
    of the baselines and get advantage 0. Metric ``kl``: mean token KL.
    """
    metrics: dict[str, torch.Tensor] = {}
    rewards = rewards.clone()
    if beta != 0.0:
        if old_per_token_logps is None or ref_per_token_logps is None or mask is None:
            raise ValueError("beta != 0 needs old_per_token_logps, ref_per_token_logps and mask")
        per_token_kl = old_per_token_logps - ref_per_token_logps
        rewards = rewards - beta * (per_token_kl * mask).sum(-1)
        metrics["kl"] = ((per_token_kl * mask).sum() / mask.sum().clamp(min=1.0)).detach()
    grouped = rewards.view(-1, num_generations)  # [B] -> [B / k, k]
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
    """RLOO's sequence-level clipped surrogate (TRL 1.16 ``RLOOTrainer._compute_loss``)::

        r_i  = exp(sum_t logp_it - old_logps_i)                 (one ratio per sequence)
        loss = mean_i clipped_surrogate(r_i, A_i, epsilon, epsilon_high)

    ``old_logps``: ``[B]`` sequence sums under the sampling policy; ``advantages``: ``[B]``.
    """
    epsilon_high = epsilon if epsilon_high is None else epsilon_high
    mask = mask.to(per_token_logps.dtype)
    logps = (per_token_logps * mask).sum(1)  # [B, T] -> [B]
    ratio = torch.exp(logps - old_logps)
    per_seq_loss, low, high = clipped_surrogate(ratio, advantages, epsilon, epsilon_high)
    loss = per_seq_loss.mean()
    metrics: dict[str, torch.Tensor] = {}
    if entropies is not None:
        metrics["entropy"] = ((entropies.detach() * mask).sum() / mask.sum().clamp(min=1.0)).float()
    with torch.no_grad():
        low, high = low.float(), high.float()
        region = ((low + high) > 0).float()
        metrics["clip_ratio/low_mean"] = low.nanmean()
        metrics["clip_ratio/low_min"] = _nan_reduce(low, torch.amin)
        metrics["clip_ratio/high_mean"] = high.nanmean()
        metrics["clip_ratio/high_max"] = _nan_reduce(high, torch.amax)
        metrics["clip_ratio/region_mean"] = region.nanmean()
    return loss, metrics


def optimal_value(rewards: torch.Tensor, beta1: float) -> torch.Tensor:
    """A*-PO Stage 1 (https://huggingface.co/papers/2505.20686): the optimal value of a prompt from ``k``
    reference samples, ``[..., k] -> [...]``, computed stably::

        V*(x) = beta1 * log( (1/k) * sum_i exp(r_i / beta1) )
    """
    return beta1 * (torch.logsumexp(rewards / beta1, dim=-1) - math.log(rewards.size(-1)))


def a2po_loss(
    policy_logps: torch.Tensor,
    ref_logps: torch.Tensor,
    rewards: torch.Tensor,
    v_star: torch.Tensor,
    beta2: float,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """A*-PO Stage 2 (https://huggingface.co/papers/2505.20686; TRL 1.16 ``experimental.a2po``): regress the
    implicit reward onto the optimal advantage, over sequences ``[B]``::

        loss = mean_i ( beta2 * (log pi(y_i|x_i) - log pi_ref(y_i|x_i)) - (r_i - V*(x_i)) )^2

    Metrics (TRL's names): ``implicit_reward``, ``advantage`` (batch means).
    """
    implicit_reward = beta2 * (policy_logps - ref_logps)
    target = rewards - v_star
    loss = ((implicit_reward - target) ** 2).mean()
    return loss, {"implicit_reward": implicit_reward.detach().mean(), "advantage": target.detach().mean()}
