"""Paired preference losses: the DPO family (every ``loss_type`` of TRL 1.16's ``DPOConfig``), CPO, ORPO and SimPO.

Inputs are per-token log-probs ``[2B, T]`` laid out like TRL's batches: the first ``B`` rows are the chosen
completions, the last ``B`` the rejected ones, with a ``[2B, T]`` completion mask. The math follows TRL 1.16
``DPOTrainer._compute_loss`` (and the experimental CPO / ORPO trainers) line by line so each paper's equation is a
few lines below its name. Every function returns ``(loss, metrics)``; metric names are TRL's
(``rewards/chosen``, ``rewards/rejected``, ``rewards/accuracies``, ``rewards/margins``, ``logps/chosen``,
``logps/rejected``, plus ``entropy``, ``logits/chosen``, ``logits/rejected``, ``mean_token_accuracy`` when the
matching per-token statistics are passed).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F

__all__ = [
    "DPO_LOSS_TYPES",
    "F_DIVERGENCE_TYPES",
    "sequence_logps",
    "wpo_weights",
    "dpo_loss",
    "cpo_loss",
    "simpo_loss",
    "orpo_loss",
]

DPO_LOSS_TYPES = (
    "sigmoid",
    "hinge",
    "ipo",
    "exo_pair",
    "nca_pair",
    "robust",
    "bco_pair",
    "sppo_hard",
    "aot",
    "aot_unpaired",
    "apo_zero",
    "apo_down",
    "discopop",
    "sft",
    "sigmoid_norm",
)
F_DIVERGENCE_TYPES = ("reverse_kl", "forward_kl", "js_divergence", "alpha_divergence")


def sequence_logps(
    per_token_logps: torch.Tensor, mask: torch.Tensor, *, ld_alpha: float | None = None
) -> torch.Tensor:
    """Sum of per-token log-probs over the completion, ``[2B, T] -> [2B]``.

    With ``ld_alpha`` (LD-DPO, https://huggingface.co/papers/2409.06411) the tokens past the shorter completion of
    each pair are down-weighted: ``logp = shared + ld_alpha * tail``, where ``shared`` covers the first
    ``min(len_chosen, len_rejected)`` completion tokens of both rows of a pair.
    """
    mask = mask.to(per_token_logps.dtype)
    if ld_alpha is None:
        return (per_token_logps * mask).sum(-1)
    comp_pos = mask.cumsum(dim=1)
    comp_lens = mask.sum(dim=1).long()
    chosen_lens, rejected_lens = comp_lens.chunk(2, dim=0)
    shared_lens = torch.minimum(chosen_lens, rejected_lens)
    shared_lens = torch.cat([shared_lens, shared_lens], dim=0)
    shared_mask = (comp_pos > 0) & (comp_pos <= shared_lens.unsqueeze(1))
    tail_mask = comp_pos > shared_lens.unsqueeze(1)
    return (per_token_logps * shared_mask).sum(dim=1) + ld_alpha * (per_token_logps * tail_mask).sum(dim=1)


def wpo_weights(
    per_token_logps: torch.Tensor, log_sum_sq_probs: torch.Tensor, mask: torch.Tensor
) -> torch.Tensor:
    """WPO (https://huggingface.co/papers/2406.11827, Eq. 2) per-sequence weight, ``[2B, T] -> [2B]``, no gradient::

        w(y) = exp( (1/|y|) * sum_t (log p(y_t) - log sum_v p_v^2) )

    the probability of the sampled token relative to the distribution's "self-probability", so sequences the current
    policy would generate weigh more.
    """
    mask = mask.to(per_token_logps.dtype)
    lengths = mask.sum(dim=1).clamp_min(1)
    with torch.no_grad():
        aligned = (per_token_logps - log_sum_sq_probs) * mask
        return torch.exp(aligned.sum(dim=1) / lengths)


def _f_divergence_scores(logratios: torch.Tensor, f_divergence_type: str, alpha: float) -> torch.Tensor:
    """``f'(pi / pi_ref)`` for the f-divergence regulariser (https://huggingface.co/papers/2309.16240)."""
    if f_divergence_type == "reverse_kl":  # standard DPO
        return logratios
    if f_divergence_type == "forward_kl":  # f'(t) = 1 - 1/t
        return 1 - torch.exp(-logratios)
    if f_divergence_type == "js_divergence":  # f'(t) = log(2t / (t + 1))
        return math.log(2) + F.logsigmoid(logratios)
    if f_divergence_type == "alpha_divergence":  # f'(t) = (t^(a-1) - 1) / (a - 1)
        if abs(alpha - 1.0) < 1e-6:
            return logratios
        t = (alpha - 1.0) * logratios
        clamp_max = {torch.float16: 11.0}.get(t.dtype, 80.0)
        return (torch.exp(torch.clamp(t.float(), max=clamp_max)) - 1.0).to(t.dtype) / (alpha - 1.0)
    raise ValueError(f"Unknown f_divergence_type {f_divergence_type!r}; expected one of {F_DIVERGENCE_TYPES}")


def _preference_metrics(
    chosen_rewards: torch.Tensor,
    rejected_rewards: torch.Tensor,
    chosen_logps: torch.Tensor,
    rejected_logps: torch.Tensor,
) -> dict[str, torch.Tensor]:
    chosen_rewards, rejected_rewards = chosen_rewards.detach().float(), rejected_rewards.detach().float()
    return {
        "rewards/chosen": chosen_rewards.mean(),
        "rewards/rejected": rejected_rewards.mean(),
        "rewards/accuracies": (chosen_rewards > rejected_rewards).float().mean(),
        "rewards/margins": (chosen_rewards - rejected_rewards).mean(),
        "logps/chosen": chosen_logps.detach().float().mean(),
        "logps/rejected": rejected_logps.detach().float().mean(),
    }


def _token_metrics(
    mask: torch.Tensor,
    entropy: torch.Tensor | None,
    mean_logits: torch.Tensor | None,
    is_top1: torch.Tensor | None,
) -> dict[str, torch.Tensor]:
    """TRL 1.16 DPO's token-level metrics: entropy over all completions, mean logit per side, chosen accuracy."""
    metrics: dict[str, torch.Tensor] = {}
    m = mask.float()
    chosen_mask, rejected_mask = m.chunk(2, dim=0)
    if entropy is not None:
        metrics["entropy"] = (entropy.detach().float() * m).sum() / m.sum().clamp(min=1)
    if mean_logits is not None:
        chosen_ml, rejected_ml = mean_logits.detach().float().chunk(2, dim=0)
        metrics["logits/chosen"] = (chosen_ml * chosen_mask).sum() / chosen_mask.sum().clamp(min=1)
        metrics["logits/rejected"] = (rejected_ml * rejected_mask).sum() / rejected_mask.sum().clamp(min=1)
    if is_top1 is not None:
        chosen_top1, _ = is_top1.detach().float().chunk(2, dim=0)
        metrics["mean_token_accuracy"] = (chosen_top1 * chosen_mask).sum() / chosen_mask.sum().clamp(min=1)
    return metrics


def dpo_loss(
    policy_logps: torch.Tensor,
    mask: torch.Tensor,
    ref_logps: torch.Tensor | None = None,
    *,
    beta: float = 0.1,
    loss_type: str | Sequence[str] = "sigmoid",
    loss_weights: Sequence[float] | None = None,
    label_smoothing: float = 0.0,
    f_divergence_type: str = "reverse_kl",
    f_alpha_divergence_coef: float = 1.0,
    ld_alpha: float | None = None,
    discopop_tau: float = 0.05,
    use_weighting: bool = False,
    log_sum_sq_probs: torch.Tensor | None = None,
    reference_free: bool = False,
    entropy: torch.Tensor | None = None,
    mean_logits: torch.Tensor | None = None,
    is_top1: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """DPO and its variants, as TRL 1.16's ``DPOTrainer`` computes them.

    Notation: ``c = log pi(y_w) - log pi_ref(y_w)``, ``r = log pi(y_l) - log pi_ref(y_l)`` (sequence sums), ``s(.)``
    the f-divergence score (``s(x) = x`` for reverse KL), ``d = s(c) - s(r)``, ``|y|`` completion length,
    ``eps`` = ``label_smoothing``, ``sig`` = sigmoid. Per pair, then mean over pairs::

        sigmoid      DPO 2305.18290 Eq. 7        -log sig(beta d)
        hinge        SLiC 2305.10425            relu(1 - beta d)
        ipo          IPO 2310.12036 Eq. 17       (s(c)/|y_w| - s(r)/|y_l| - 1/(2 beta))^2
        exo_pair     EXO 2402.00856 Eq. 16       sig(beta d)(log sig(beta d) - log(1 - eps))
                                                   + sig(-beta d)(log sig(-beta d) - log eps)
        nca_pair     NCA 2402.05369             -log sig(beta c) - 0.5 log sig(-beta c) - 0.5 log sig(-beta r)
        robust       rDPO 2403.00409 Eq. 3       (-(1 - eps) log sig(beta d) + eps log sig(-beta d)) / (1 - 2 eps)
        bco_pair     BCO 2404.04656             -log sig(beta c) - log sig(-beta r)
        sppo_hard    SPPO 2405.00675            (c - 1/(2 beta))^2 + (r + 1/(2 beta))^2
        aot          AOT 2406.05882             x = sorted(log pi_w - log pi_l) - sorted(ref's), over the batch:
                                                   -(1 - eps) log sig(beta x) - eps log sig(-beta x)
        aot_unpaired AOT 2406.05882              the same with x = sorted(c) - sorted(r)
        apo_zero     APO 2408.06266 Eq. 7        (1 - sig(beta c)) + sig(beta r)
        apo_down     APO 2408.06266 Eq. 8        sig(beta c) + (1 - sig(beta (c - r)))
        discopop     DiscoPOP 2406.08414 Eq. 5   m = sig(beta d / tau): -(1 - m) log sig(beta d) + m exp(-beta d)
        sft          RPO 2404.19733              mean token NLL of the chosen completions
        sigmoid_norm                             -log sig(beta (s(c)/|y_w| - s(r)/|y_l|))

    f-DPO scores (2309.16240, Table 1): reverse KL ``x``; forward KL ``1 - exp(-x)``; JS ``log 2 + log sig(x)``;
    alpha ``(exp((alpha - 1) x) - 1) / (alpha - 1)``. WPO multiplies each pair's loss by ``w(y_w) w(y_l)``.
    Metrics: ``rewards/chosen = beta c``, ``rewards/rejected = beta r`` (and TRL's accuracies / margins).

    Args:
        policy_logps: ``[2B, T]`` per-token log-probs of the policy (chosen rows first, then rejected).
        mask: ``[2B, T]`` completion mask.
        ref_logps: the reference model's log-probs, either per token ``[2B, T]`` (summed here like the policy's, with
            ``ld_alpha``) or per sequence ``[2B]`` (precomputed, already summed). ``None`` requires
            ``reference_free=True`` (the reference log-probs are then 0, i.e. an implicit uniform reference).
        beta: the KL-regularisation strength (IPO's tau, SPPO's eta^-1).
        loss_type: one name of :data:`DPO_LOSS_TYPES` or a list of them, combined as
            ``sum_i loss_weights[i] * mean(loss_i)`` (MPO-style; weights default to 1).
        label_smoothing: conservative-DPO / robust / EXO / AOT smoothing epsilon.
        f_divergence_type, f_alpha_divergence_coef: f-DPO regulariser (:data:`F_DIVERGENCE_TYPES`).
        ld_alpha: LD-DPO tail weight (see :func:`sequence_logps`).
        discopop_tau: DiscoPOP mixing temperature.
        use_weighting, log_sum_sq_probs: WPO weighting; needs the per-token ``log_sum_sq_probs`` ``[2B, T]``.
        entropy, mean_logits, is_top1: optional per-token statistics for TRL's token-level metrics.
    """
    loss_types = [loss_type] if isinstance(loss_type, str) else list(loss_type)
    weights = [1.0] * len(loss_types) if loss_weights is None else list(loss_weights)
    if len(weights) != len(loss_types):
        raise ValueError(f"loss_weights has {len(weights)} entries for {len(loss_types)} loss types")
    for name in loss_types:
        if name not in DPO_LOSS_TYPES:
            raise ValueError(f"Unknown loss type {name!r}; expected one of {DPO_LOSS_TYPES}")
    if use_weighting and any(name in {"aot", "aot_unpaired"} for name in loss_types):
        raise ValueError("WPO weighting (use_weighting=True) is not supported with the aot / aot_unpaired losses")

    logps = sequence_logps(policy_logps, mask, ld_alpha=ld_alpha)
    if ref_logps is None:
        if not reference_free:
            raise ValueError("ref_logps is None; pass the reference log-probs or reference_free=True")
        ref_seq = torch.zeros_like(logps)
    elif reference_free:
        ref_seq = torch.zeros_like(logps)
    elif ref_logps.dim() == 1:
        ref_seq = ref_logps.to(logps.dtype)
    else:
        ref_seq = sequence_logps(ref_logps.to(logps.dtype), mask, ld_alpha=ld_alpha)

    chosen_logps, rejected_logps = logps.chunk(2, dim=0)
    ref_chosen_logps, ref_rejected_logps = ref_seq.chunk(2, dim=0)
    chosen_logratios = chosen_logps - ref_chosen_logps
    rejected_logratios = rejected_logps - ref_rejected_logps
    chosen_scores = _f_divergence_scores(chosen_logratios, f_divergence_type, f_alpha_divergence_coef)
    rejected_scores = _f_divergence_scores(rejected_logratios, f_divergence_type, f_alpha_divergence_coef)
    delta_score = chosen_scores - rejected_scores
    chosen_mask, rejected_mask = mask.to(logps.dtype).chunk(2, dim=0)

    loss = logps.new_zeros(())
    for name, weight in zip(loss_types, weights, strict=True):
        if name == "sigmoid":  # DPO, https://huggingface.co/papers/2305.18290 (Eq. 7)
            per_seq = -F.logsigmoid(beta * delta_score)
        elif name == "hinge":  # SLiC, https://huggingface.co/papers/2305.10425
            per_seq = torch.relu(1 - beta * delta_score)
        elif name == "ipo":  # IPO, https://huggingface.co/papers/2310.12036 (Eq. 17), length-normalised
            ipo_delta = chosen_scores / chosen_mask.sum(1).clamp(min=1.0) - rejected_scores / rejected_mask.sum(
                1
            ).clamp(min=1.0)
            per_seq = (ipo_delta - 1 / (2 * beta)) ** 2
        elif name == "exo_pair":  # EXO, https://huggingface.co/papers/2402.00856 (Eq. 16)
            eps = torch.tensor(label_smoothing, device=logps.device, dtype=logps.dtype)
            per_seq = torch.sigmoid(beta * delta_score) * (
                F.logsigmoid(beta * delta_score) - torch.log1p(-eps)
            ) + torch.sigmoid(-beta * delta_score) * (F.logsigmoid(-beta * delta_score) - torch.log(eps))
        elif name == "nca_pair":  # NCA, https://huggingface.co/papers/2402.05369
            chosen_rewards, rejected_rewards = beta * chosen_logratios, beta * rejected_logratios
            per_seq = (
                -F.logsigmoid(chosen_rewards)
                - 0.5 * F.logsigmoid(-chosen_rewards)
                - 0.5 * F.logsigmoid(-rejected_rewards)
            )
        elif name == "robust":  # rDPO, https://huggingface.co/papers/2403.00409 (Eq. 3)
            clean = -(1 - label_smoothing) * F.logsigmoid(beta * delta_score)
            flipped = -label_smoothing * F.logsigmoid(-beta * delta_score)
            per_seq = (clean - flipped) / (1 - 2 * label_smoothing)
        elif name == "bco_pair":  # BCO on pairs, https://huggingface.co/papers/2404.04656
            per_seq = -F.logsigmoid(beta * chosen_logratios) - F.logsigmoid(-beta * rejected_logratios)
        elif name == "sppo_hard":  # SPPO with hard win probabilities, https://huggingface.co/papers/2405.00675
            per_seq = (chosen_logratios - 0.5 / beta) ** 2 + (rejected_logratios + 0.5 / beta) ** 2
        elif name == "aot":  # AOT paired, https://huggingface.co/papers/2406.05882
            logratios_sorted, _ = torch.sort(chosen_logps - rejected_logps, dim=0)
            ref_sorted, _ = torch.sort(ref_chosen_logps - ref_rejected_logps, dim=0)
            d = logratios_sorted - ref_sorted
            per_seq = -F.logsigmoid(beta * d) * (1 - label_smoothing) - F.logsigmoid(-beta * d) * label_smoothing
        elif name == "aot_unpaired":
            chosen_sorted, _ = torch.sort(chosen_logratios, dim=0)
            rejected_sorted, _ = torch.sort(rejected_logratios, dim=0)
            d = chosen_sorted - rejected_sorted
            per_seq = -F.logsigmoid(beta * d) * (1 - label_smoothing) - F.logsigmoid(-beta * d) * label_smoothing
        elif name == "apo_zero":  # APO-zero, https://huggingface.co/papers/2408.06266 (Eq. 7)
            per_seq = (1 - torch.sigmoid(beta * chosen_logratios)) + torch.sigmoid(beta * rejected_logratios)
        elif name == "apo_down":  # APO-down (Eq. 8)
            per_seq = torch.sigmoid(beta * chosen_logratios) + (
                1 - torch.sigmoid(beta * (chosen_logratios - rejected_logratios))
            )
        elif name == "discopop":  # DiscoPOP, https://huggingface.co/papers/2406.08414 (Eq. 5)
            logits = delta_score * beta
            modulation = torch.sigmoid(logits / discopop_tau)
            per_seq = -F.logsigmoid(logits) * (1 - modulation) + torch.exp(-logits) * modulation
        elif name == "sft":  # NLL on the chosen completions (RPO / MPO's SFT term)
            chosen_tok, _ = policy_logps.chunk(2, dim=0)
            cm = chosen_mask.bool()
            per_seq = (-chosen_tok[cm].mean()).expand(chosen_tok.size(0))
        else:  # "sigmoid_norm": DPO on length-normalised scores
            d = chosen_scores / chosen_mask.sum(1).clamp(min=1.0) - rejected_scores / rejected_mask.sum(1).clamp(
                min=1.0
            )
            per_seq = -F.logsigmoid(beta * d)

        if use_weighting:
            if log_sum_sq_probs is None:
                raise ValueError("use_weighting=True needs the per-token log_sum_sq_probs from chunked_logprobs")
            w_chosen, w_rejected = wpo_weights(policy_logps, log_sum_sq_probs, mask).chunk(2, dim=0)
            per_seq = per_seq * (w_chosen * w_rejected)
        loss = loss + per_seq.mean() * weight

    metrics = _preference_metrics(beta * chosen_logratios, beta * rejected_logratios, chosen_logps, rejected_logps)
    metrics.update(_token_metrics(mask, entropy, mean_logits, is_top1))
    return loss, metrics


def _average_and_nll(policy_logps: torch.Tensor, mask: torch.Tensor, average: bool):
    mask = mask.to(policy_logps.dtype)
    sums = (policy_logps * mask).sum(-1)
    logps = sums / mask.sum(-1).clamp(min=1) if average else sums
    chosen_tok, _ = policy_logps.chunk(2, dim=0)
    chosen_mask, _ = mask.chunk(2, dim=0)
    nll = -(chosen_tok * chosen_mask).sum() / chosen_mask.sum().clamp(min=1)
    return logps.chunk(2, dim=0), nll


def cpo_loss(
    policy_logps: torch.Tensor,
    mask: torch.Tensor,
    *,
    beta: float = 0.1,
    loss_type: str = "sigmoid",
    label_smoothing: float = 0.0,
    simpo_gamma: float = 0.5,
    cpo_alpha: float = 1.0,
    alpha: float = 0.0,
    mean_logits: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Contrastive Preference Optimization (https://huggingface.co/papers/2401.08417), TRL's experimental
    ``CPOTrainer``: a reference-free preference term on the policy log-probs plus ``cpo_alpha`` times the NLL of the
    chosen completions. With ``x = s_w - s_l`` (sequence sums; averages for ``ipo`` / ``simpo``), per pair::

        sigmoid:  -(1 - eps) log sigmoid(beta x) - eps log sigmoid(-beta x)           (Eq. 3)
        hinge:    relu(1 - beta x)
        ipo:      (x - 1 / (2 beta))^2
        simpo:    the sigmoid form on x - gamma / beta                                  (SimPO's margin)
        loss = mean over pairs + cpo_alpha * (mean token NLL of the chosen completions)

    ``loss_type``: ``sigmoid`` (Eq. 3, with ``label_smoothing``), ``hinge``, ``ipo``, ``simpo`` (SimPO's margin
    ``simpo_gamma``; with ``cpo_alpha=0`` this is SimPO). ``ipo`` and ``simpo`` use length-averaged log-probs.
    ``alpha != 0`` applies AlphaPO's reward shaping ``r = (1 - p^(-alpha)) / alpha``
    (https://huggingface.co/papers/2501.03884). Extra metric: ``nll_loss``.
    """
    if loss_type not in ("sigmoid", "hinge", "ipo", "simpo"):
        raise ValueError(f"Unknown loss type {loss_type!r}; expected one of sigmoid, hinge, ipo, simpo")
    (chosen_logps, rejected_logps), nll = _average_and_nll(policy_logps, mask, loss_type in ("ipo", "simpo"))
    if alpha != 0.0:
        chosen_r = (1 - torch.exp(chosen_logps).pow(-alpha)) / alpha
        rejected_r = (1 - torch.exp(rejected_logps).pow(-alpha)) / alpha
    else:
        chosen_r, rejected_r = chosen_logps, rejected_logps
    logits = chosen_r - rejected_r
    if loss_type == "simpo":
        logits = logits - simpo_gamma / beta
    if loss_type in ("sigmoid", "simpo"):
        losses = -F.logsigmoid(beta * logits) * (1 - label_smoothing) - F.logsigmoid(-beta * logits) * label_smoothing
    elif loss_type == "hinge":
        losses = torch.relu(1 - beta * logits)
    else:
        losses = (logits - 1 / (2 * beta)) ** 2
    nll_term = nll if cpo_alpha != 0 else torch.zeros_like(nll)
    loss = losses.mean() + cpo_alpha * nll_term
    metrics = _preference_metrics(beta * chosen_r, beta * rejected_r, chosen_logps, rejected_logps)
    metrics["nll_loss"] = nll_term.detach()
    metrics.update(_token_metrics(mask, None, mean_logits, None))
    return loss, metrics


def simpo_loss(
    policy_logps: torch.Tensor,
    mask: torch.Tensor,
    *,
    beta: float = 2.0,
    gamma: float = 0.5,
    label_smoothing: float = 0.0,
    sft_weight: float = 0.0,
    mean_logits: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """SimPO (https://huggingface.co/papers/2405.14734, Eq. 6): ``-logsigmoid(beta * (avg_logp_w - avg_logp_l) -
    gamma)`` on length-averaged log-probs, no reference model; optional ``sft_weight`` times the chosen NLL.

    Equal to :func:`cpo_loss` with ``loss_type="simpo"``, ``simpo_gamma=gamma`` and ``cpo_alpha=sft_weight``.
    """
    return cpo_loss(
        policy_logps,
        mask,
        beta=beta,
        loss_type="simpo",
        label_smoothing=label_smoothing,
        simpo_gamma=gamma,
        cpo_alpha=sft_weight,
        mean_logits=mean_logits,
    )


def _log1mexp(x: torch.Tensor) -> torch.Tensor:
    """``log(1 - exp(x))`` for ``x < 0``, stable on both sides of ``-log 2``."""
    return torch.where(x > -math.log(2), torch.log(-torch.expm1(x)), torch.log1p(-torch.exp(x)))


def orpo_loss(
    policy_logps: torch.Tensor,
    mask: torch.Tensor,
    *,
    beta: float = 0.1,
    mean_logits: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """ORPO (https://huggingface.co/papers/2403.07691, Eqs. 4 and 7): chosen NLL minus ``beta`` times the log-sigmoid
    of the log odds ratio of the length-averaged chosen vs rejected probabilities. Extra metrics (TRL names):
    ``log_odds_ratio``, ``log_odds_chosen``, ``nll_loss``."""
    (chosen_logps, rejected_logps), nll = _average_and_nll(policy_logps, mask, True)
    dtype = torch.promote_types(chosen_logps.dtype, torch.float32)
    # an empty completion averages to log p = 0, where the odds are infinite: keep it a hair below 0
    chosen_logps = chosen_logps.to(dtype).clamp(max=-1e-7)
    rejected_logps = rejected_logps.to(dtype).clamp(max=-1e-7)
    log_odds = (chosen_logps - rejected_logps) - (_log1mexp(chosen_logps) - _log1mexp(rejected_logps))
    ratio = F.logsigmoid(log_odds)
    loss = nll - (beta * ratio).mean()
    metrics = _preference_metrics(beta * chosen_logps, beta * rejected_logps, chosen_logps, rejected_logps)
    metrics["log_odds_ratio"] = ratio.mean().detach()
    metrics["log_odds_chosen"] = log_odds.mean().detach()
    metrics["nll_loss"] = nll.detach()
    metrics.update(_token_metrics(mask, None, mean_logits, None))
    return loss, metrics
