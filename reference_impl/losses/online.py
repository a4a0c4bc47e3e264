"""Online preference losses on pairs the trainer samples itself: XPO and Nash-MD.

Both methods sample, for every prompt, one completion from the policy ``pi`` and one from a second policy (XPO: the
reference ``pi_ref``; Nash-MD: the geometric mixture of ``pi`` and ``pi_ref``), score both with a reward model, and
update ``pi`` from the outcome. The math follows TRL 1.13's ``trl.experimental.xpo.XPOTrainer._compute_losses`` and
``trl.experimental.nash_md.NashMDTrainer._compute_losses`` (removed in TRL 1.14); every function returns
``(loss, metrics)`` with TRL's metric names.
"""

from __future__ import annotations

import torch

from .preference import dpo_loss

__all__ = ["nash_md_loss", "xpo_loss"]


def xpo_loss(
    policy_logps: torch.Tensor,
    ref_logps: torch.Tensor,
    policy_wins: torch.Tensor,
    *,
    beta: float,
    alpha: float,
    loss_type: str = "sigmoid",
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Exploratory Preference Optimization (Xie et al. 2024, https://huggingface.co/papers/2405.21046, Alg. 1).

    Rows ``[2B]`` are sequence log-probs (sums over completion tokens): the first ``B`` of the completions ``y``
    sampled from the policy, the last ``B`` of the completions ``y'`` sampled from the reference, the same prompt at
    row ``i`` and ``B + i``. ``policy_wins[i]``: ``y_i`` scored at least as high as ``y'_i``, so it is the chosen one.
    With ``h(x) = log pi(x) - log pi_ref(x)``, ``(y_w, y_l)`` the pair ordered by the reward::

        loss = mean_i [ DPO(beta (h(y_w) - h(y_l))) + alpha log pi(y'_i) ]

    ``DPO`` is ``-log sig(.)`` (``sigmoid``) or IPO's ``(h(y_w) - h(y_l) - 1/(2 beta))^2`` (``ipo``, not
    length-normalised, as in TRL). The second term is XPO's exploration bonus: minimising ``alpha log pi(y')``
    moves probability away from what the reference would say, towards responses it rarely samples.

    Metrics (TRL's): ``loss/dpo``, ``loss/xpo``, ``objective/kl`` (mean ``h`` over the ``2B`` rows),
    ``objective/entropy`` (mean ``-log pi``), ``rewards/{chosen,rejected,accuracies,margins}`` (``beta h``),
    ``logps/{chosen,rejected}`` (TRL 1.13 logs ``mean log pi + mean log pi_ref`` of each side).
    """
    n = policy_wins.numel()
    policy_wins = policy_wins.bool()
    idx = torch.arange(n, device=policy_logps.device)
    chosen = torch.where(policy_wins, idx, idx + n)
    rejected = torch.where(policy_wins, idx + n, idx)
    order = torch.cat([chosen, rejected])
    # sequence sums as one-"token" sequences: DPO on whole-sequence log-ratios, IPO without length normalisation
    ones = torch.ones(2 * n, 1, device=policy_logps.device, dtype=policy_logps.dtype)
    dpo, metrics = dpo_loss(policy_logps[order].unsqueeze(1), ones, ref_logps[order].unsqueeze(1), beta=beta,
                            loss_type=loss_type)
    exploration = alpha * policy_logps[n:]  # log pi of the reference's samples
    loss = dpo + exploration.mean()
    with torch.no_grad():
        p, r = policy_logps.detach().float(), ref_logps.detach().float()
        metrics.update({
            "loss/dpo": dpo.detach(),
            "loss/xpo": exploration.detach().float().mean(),
            "objective/kl": (p - r).mean(),
            "objective/entropy": -p.mean(),
            "logps/chosen": p[chosen].mean() + r[chosen].mean(),
            "logps/rejected": p[rejected].mean() + r[rejected].mean(),
        })
    return loss, metrics


def nash_md_loss(
    policy_logps: torch.Tensor,
    ref_logps: torch.Tensor,
    mask: torch.Tensor,
    probability: torch.Tensor,
    *,
    beta: float,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Nash-MD (Munos et al. 2023, "Nash Learning from Human Feedback", https://huggingface.co/papers/2312.00886,
    Sec. 7), the REINFORCE form TRL implements.

    ``policy_logps`` / ``ref_logps``: ``[B, T]`` per-token log-probs under ``pi`` / ``pi_ref`` of completions ``y``
    sampled from the policy, ``mask`` their completion mask. ``probability[i] = P(y_i > y'_i)``: the preference of
    ``y_i`` over the completion ``y'_i`` sampled from the mixture ``pi^(1-c) pi_ref^c``, TRL's
    ``sig(r(y) - r(y'))`` from the reward model. With ``sg`` the stop-gradient and sums over completion tokens::

        score = (P - 1/2) sum_t log pi(y_t)                         (policy gradient, baseline 1/2)
        kl    = sum_t sg(log pi(y_t) - log pi_ref(y_t)) log pi(y_t)  (its gradient is that of KL(pi || pi_ref))
        loss  = mean_i [ beta kl - score ]

    Metrics (TRL's): ``loss/score``, ``loss/kl`` (the sequence log-ratio ``sum_t log pi - log pi_ref``),
    ``logps/chosen`` (``sum log pi``), ``logps/rejected`` (``sum log pi_ref``, of the same policy samples),
    ``rewards/probabilities``, ``objective/entropy``, ``rewards/margins`` and ``rewards/accuracies`` (of the
    sequence log-ratio).
    """
    mask = mask.to(policy_logps.dtype)
    policy_logps, ref_logps = policy_logps * mask, ref_logps.to(policy_logps.dtype) * mask
    policy_seq = policy_logps.sum(1)
    score = (probability.to(policy_seq.dtype) - 0.5) * policy_seq
    log_ratio = (policy_logps - ref_logps).detach()
    kl = (log_ratio * policy_logps).sum(1)
    loss = (beta * kl - score).mean()
    with torch.no_grad():
        p_seq, r_seq = policy_seq.detach().float(), ref_logps.detach().float().sum(1)
        margin = p_seq - r_seq
        metrics = {
            "loss/score": score.detach().float().mean(),
            "loss/kl": log_ratio.float().sum(1).mean(),
            "logps/chosen": p_seq.mean(),
            "logps/rejected": r_seq.mean(),
            "rewards/probabilities": probability.detach().float().mean(),
            "objective/entropy": -p_seq.mean(),
            "rewards/margins": margin.mean(),
            "rewards/accuracies": (margin > 0).float().mean(),
        }
    return loss, metrics
