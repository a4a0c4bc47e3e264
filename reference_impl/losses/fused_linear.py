"""``trl.losses`` (TRL 1.13) drop-in modules on top of the chunked engine.

TRL 1.13 shipped four fused-linear losses vendored from Liger (``FusedLinearDPOLoss``, ``FusedLinearKTOLoss``,
``FusedLinearGRPOLoss``, ``FusedLinearJSDLoss``); TRL 1.16 removed ``trl.losses``. These adapters keep the 1.13
constructor and ``forward`` signatures and return values, so code written against ``trl.losses`` runs on any TRL,
but every log-prob comes from :func:`reference_impl.chunking.chunked_logprobs` (bf16 projection, fp32 softmax, no
``[N, V]`` logits) and the loss math from :mod:`reference_impl.losses`.

Semantics kept from 1.13 on purpose (they differ from the 1.16 trainers): DPO/KTO divide by the number of pairs /
examples of the whole call; the 1.13 GRPO ``luspo`` / clip-ratio reductions; the JSD soft loss divided by the number
of non-ignored labels. Arguments that only steered Liger's implementation (``compiled``, ``chunk_size``) are accepted
and ignored. Where 1.13 computed something in bf16 (the JSD soft loss on bf16 logits) this computes it in fp32, so
bf16 results are closer to the fp32 value than 1.13's were.
"""

from __future__ import annotations

import torch
from torch import nn

from ..chunking import chunked_divergence, chunked_logprobs
from .policy import k3_kl, log_importance_weights, policy_per_token_loss
from .preference import dpo_loss

__all__ = ["FusedLinearDPOLoss", "FusedLinearKTOLoss", "FusedLinearGRPOLoss", "FusedLinearJSDLoss"]


def _mean_logits_sum(hidden: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """``sum`` over rows and vocabulary of ``hidden @ weight.T + bias`` in O(N*H): ``hidden . sum_v W_v + N * sum b``."""
    dtype = torch.promote_types(weight.dtype, torch.float32)
    with torch.no_grad():
        w_sum = weight.sum(0, dtype=dtype)
        flat = hidden.reshape(-1, hidden.shape[-1])
        total = (flat.to(dtype) @ w_sum).sum()
        if bias is not None:
            total = total + flat.shape[0] * bias.sum(dtype=dtype)
        return total


def _seq_logps(per_token: torch.Tensor, target: torch.Tensor, ignore_index: int, average: bool) -> torch.Tensor:
    mask = (target != ignore_index).to(per_token.dtype)
    sums = (per_token * mask).sum(-1)
    return sums / mask.sum(-1) if average else sums


class FusedLinearDPOLoss(nn.Module):
    """TRL 1.13 ``trl.losses.FusedLinearDPOLoss``: DPO on ``[2B, T, H]`` hidden states (chosen rows first).

    ``forward(lin_weight, _input, target, bias=None, ref_input=None, ref_weight=None, ref_bias=None)`` returns
    ``(loss, (chosen_logps, rejected_logps, chosen_logits_mean, rejected_logits_mean, nll_loss, chosen_rewards,
    rejected_rewards))`` where the log-probs and rewards are ``[B]`` and the rest scalars, like 1.13.
    """

    _SUPPORTED_LOSS_TYPES = {
        "sigmoid",
        "hinge",
        "exo_pair",
        "nca_pair",
        "robust",
        "bco_pair",
        "sppo_hard",
        "apo_zero",
        "apo_down",
        "discopop",
    }

    def __init__(
        self,
        ignore_index: int = -100,
        beta: float = 0.1,
        alpha: float = 1.0,
        compute_nll_loss: bool = False,
        compiled: bool = True,
        use_ref_model: bool = True,
        average_log_prob: bool = False,
        chunk_size: int = 1,
        loss_type: str = "sigmoid",
        label_smoothing: float = 0.0,
        discopop_tau: float = 0.05,
    ):
        super().__init__()
        if loss_type not in self._SUPPORTED_LOSS_TYPES:
            raise ValueError(f"Unsupported loss_type: {loss_type}. Supported: {sorted(self._SUPPORTED_LOSS_TYPES)}")
        if loss_type == "exo_pair" and label_smoothing <= 0.0:
            raise ValueError("label_smoothing must be > 0 for loss_type='exo_pair'. The EXO paper recommends 1e-3.")
        if loss_type == "robust" and not 0.0 <= label_smoothing < 0.5:
            raise ValueError(f"label_smoothing must lie in [0.0, 0.5) for loss_type='robust'. Got {label_smoothing}.")
        self.ignore_index = ignore_index
        self.beta = beta
        self.alpha = alpha
        self.compute_nll_loss = compute_nll_loss
        self.compiled = compiled
        self.use_ref_model = use_ref_model
        self.average_log_prob = average_log_prob
        self.chunk_size = chunk_size
        self.loss_type = loss_type
        self.label_smoothing = label_smoothing
        self.discopop_tau = discopop_tau

    def forward(
        self,
        lin_weight: torch.Tensor,
        _input: torch.Tensor,
        target: torch.Tensor,
        bias: torch.Tensor | None = None,
        ref_input: torch.Tensor | None = None,
        ref_weight: torch.Tensor | None = None,
        ref_bias: torch.Tensor | None = None,
    ):
        per_token = chunked_logprobs(_input, lin_weight, target, bias=bias, ignore_index=self.ignore_index)["logp"]
        logps = _seq_logps(per_token, target, self.ignore_index, self.average_log_prob)
        n_pairs = target.shape[0] // 2
        if self.use_ref_model:
            with torch.no_grad():
                ref_tok = chunked_logprobs(
                    ref_input, ref_weight, target, bias=ref_bias, ignore_index=self.ignore_index
                )["logp"]
                ref_logps = _seq_logps(ref_tok, target, self.ignore_index, self.average_log_prob)
        else:
            ref_logps = None
        ones = torch.ones_like(logps).unsqueeze(1)
        pref_loss, _ = dpo_loss(
            logps.unsqueeze(1),
            ones,
            ref_logps,
            beta=self.beta,
            loss_type=self.loss_type,
            label_smoothing=self.label_smoothing,
            discopop_tau=self.discopop_tau,
            reference_free=not self.use_ref_model,
        )
        if self.compute_nll_loss:
            chosen_mask = (target[:n_pairs] != self.ignore_index).to(per_token.dtype)
            nll = -(per_token[:n_pairs] * chosen_mask).sum() / chosen_mask.sum()
        else:
            nll = per_token.new_zeros(())
        loss = self.alpha * nll + pref_loss
        chosen_logps, rejected_logps = logps[:n_pairs], logps[n_pairs:]
        ref_c, ref_r = (ref_logps[:n_pairs], ref_logps[n_pairs:]) if ref_logps is not None else (0.0, 0.0)
        denom = n_pairs * _input.shape[1] * lin_weight.shape[0]
        return loss, (
            chosen_logps.detach(),
            rejected_logps.detach(),
            _mean_logits_sum(_input[:n_pairs], lin_weight, bias) / denom,
            _mean_logits_sum(_input[n_pairs:], lin_weight, bias) / denom,
            nll.detach(),
            (self.beta * (chosen_logps - ref_c)).detach(),
            (self.beta * (rejected_logps - ref_r)).detach(),
        )


class FusedLinearKTOLoss(nn.Module):
    """TRL 1.13 ``trl.losses.FusedLinearKTOLoss``.

    ``forward(_input, lin_weight, target, bias=None, preference_labels=None, ref_input=None, ref_weight=None,
    ref_bias=None, kl=None)`` returns ``(loss, (chosen_logps_sum, rejected_logps_sum, chosen_logits_sum,
    rejected_logits_sum, chosen_rewards_sum, rejected_rewards_sum))``; ``loss`` is the sum of the per-example KTO
    losses divided by the batch size.
    """

    def __init__(
        self,
        ignore_index: int = -100,
        beta: float = 0.1,
        compiled: bool = True,
        use_ref_model: bool = False,
        average_log_prob: bool = False,
        chunk_size: int = 1,
    ):
        super().__init__()
        self.ignore_index = ignore_index
        self.beta = beta
        self.compiled = compiled
        self.use_ref_model = use_ref_model
        self.average_log_prob = average_log_prob
        self.chunk_size = chunk_size

    def forward(
        self,
        _input: torch.Tensor,
        lin_weight: torch.Tensor,
        target: torch.Tensor,
        bias: torch.Tensor | None = None,
        preference_labels: torch.Tensor | None = None,
        ref_input: torch.Tensor | None = None,
        ref_weight: torch.Tensor | None = None,
        ref_bias: torch.Tensor | None = None,
        kl: torch.Tensor | None = None,
    ):
        labels = preference_labels.to(torch.bool)
        per_token = chunked_logprobs(_input, lin_weight, target, bias=bias, ignore_index=self.ignore_index)["logp"]
        logps = _seq_logps(per_token, target, self.ignore_index, self.average_log_prob)
        logratios = logps
        if self.use_ref_model:
            with torch.no_grad():
                ref_tok = chunked_logprobs(
                    ref_input, ref_weight, target, bias=ref_bias, ignore_index=self.ignore_index
                )["logp"]
            logratios = logps - _seq_logps(ref_tok, target, self.ignore_index, self.average_log_prob)
        sign = torch.where(labels, 1.0, -1.0).to(logratios.dtype)
        shifted = logratios - kl if kl is not None else logratios
        losses = 1 - torch.sigmoid(self.beta * shifted * sign)
        loss = losses.sum() / target.shape[0]
        rewards = (self.beta * logratios).detach()
        chosen_logits = _mean_logits_sum(_input[labels], lin_weight, bias)
        rejected_logits = _mean_logits_sum(_input[~labels], lin_weight, bias)
        return loss, (
            (logps.detach() * labels).sum(),
            (logps.detach() * ~labels).sum(),
            chosen_logits,
            rejected_logits,
            (rewards * labels).sum(),
            (rewards * ~labels).sum(),
        )


class FusedLinearGRPOLoss(nn.Module):
    """TRL 1.13 ``trl.losses.FusedLinearGRPOLoss``.

    ``forward(_input, lin_weight, selected_token_ids, attention_mask, advantages, bias=None, ref_per_token_logps=None,
    old_per_token_logps=None, ref_input=None, ref_weight=None, ref_bias=None, vllm_is_ratio=None,
    num_items_in_batch=None)`` returns ``(loss, metrics)`` with ``metrics = (kl, clip_ratio)`` when ``beta != 0`` and
    ``(clip_ratio,)`` otherwise, each a token-weighted mean over the masked positions (1.13's reductions).
    """

    def __init__(
        self,
        beta: float = 0.04,
        compiled: bool = True,
        use_ref_model: bool = True,
        chunk_size: int = 1,
        epsilon_low: float = 0.2,
        epsilon_high: float = 0.2,
        loss_type: str = "dapo",
        max_completion_length: int | None = None,
        importance_sampling_level: str = "token",
        sapo_temperature_pos: float = 1.0,
        sapo_temperature_neg: float = 1.05,
        temperature: float = 1.0,
        delta: float | None = None,
        use_bias_correction_kl: bool = False,
        vespo_k_pos: float = 2.0,
        vespo_lambda_pos: float = 3.0,
        vespo_k_neg: float = 3.0,
        vespo_lambda_neg: float = 2.0,
    ):
        super().__init__()
        if importance_sampling_level == "sequence" and loss_type in ("cispo", "sapo", "vespo"):
            raise ValueError(
                f"Sequence-level importance sampling is not supported for loss_type='{loss_type}'. "
                "Use importance_sampling_level='token' instead."
            )
        for name in ("sapo_temperature_pos", "sapo_temperature_neg"):
            if locals()[name] <= 0:
                raise ValueError("sapo_temperature must be > 0.")
        self.beta = beta
        self.compiled = compiled
        self.use_ref_model = use_ref_model
        self.chunk_size = chunk_size
        self.epsilon_low = epsilon_low
        self.epsilon_high = epsilon_high
        self.loss_type = loss_type
        self.max_completion_length = max_completion_length
        self.importance_sampling_level = importance_sampling_level
        self.sapo_temperature_pos = sapo_temperature_pos
        self.sapo_temperature_neg = sapo_temperature_neg
        self.temperature = temperature
        self.delta = delta
        self.use_bias_correction_kl = use_bias_correction_kl
        self.vespo = dict(k_pos=vespo_k_pos, lambda_pos=vespo_lambda_pos, k_neg=vespo_k_neg, lambda_neg=vespo_lambda_neg)

    def forward(
        self,
        _input: torch.Tensor,
        lin_weight: torch.Tensor,
        selected_token_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        advantages: torch.Tensor,
        bias: torch.Tensor | None = None,
        ref_per_token_logps: torch.Tensor | None = None,
        old_per_token_logps: torch.Tensor | None = None,
        ref_input: torch.Tensor | None = None,
        ref_weight: torch.Tensor | None = None,
        ref_bias: torch.Tensor | None = None,
        vllm_is_ratio: torch.Tensor | None = None,
        num_items_in_batch: int | torch.Tensor | None = None,
    ):
        # 1.13 scores every position (no ignore_index): completion ids are real tokens, padding is in the mask only
        logps = chunked_logprobs(
            _input, lin_weight, selected_token_ids, bias=bias, temperature=self.temperature, ignore_index=-(2**62)
        )["logp"]
        if self.use_ref_model and ref_per_token_logps is None and ref_input is not None:
            with torch.no_grad():
                ref_per_token_logps = chunked_logprobs(
                    ref_input,
                    ref_weight,
                    selected_token_ids,
                    bias=ref_bias,
                    temperature=self.temperature,
                    ignore_index=-(2**62),
                )["logp"]
        return _grpo_loss_113(
            logps,
            attention_mask.to(logps.dtype),
            advantages,
            ref=ref_per_token_logps.float() if ref_per_token_logps is not None else logps.detach(),
            old=old_per_token_logps.float() if old_per_token_logps is not None else logps.detach(),
            is_ratio=vllm_is_ratio,
            num_items_in_batch=num_items_in_batch,
            module=self,
        )


def _grpo_loss_113(logps, mask, advantages, *, ref, old, is_ratio, num_items_in_batch, module):
    """TRL 1.13 ``FusedLinearGRPOFunction.ppo_loss_fn`` over the whole batch (its chunk sums add up to this).

    The per-token policy term is :func:`reference_impl.losses.policy.policy_per_token_loss` (the 1.16 one); only the
    reductions (``luspo``, the world-size normaliser) and the single ``clip_ratio`` metric are 1.13's.
    Shapes: ``logps, mask, ref, old`` ``[B, T]``; ``advantages`` ``[B]``.
    """
    m = module
    adv = advantages.unsqueeze(1)
    log_ratio = logps - old
    log_iw = log_importance_weights(log_ratio, mask, m.importance_sampling_level)
    per_token_loss, extras = policy_per_token_loss(
        m.loss_type, logps, log_ratio, log_iw, adv, mask,
        epsilon_low=m.epsilon_low, epsilon_high=m.epsilon_high, delta=m.delta,
        sapo_temperature_pos=m.sapo_temperature_pos, sapo_temperature_neg=m.sapo_temperature_neg,
        importance_sampling_ratio=is_ratio, vespo_k_pos=m.vespo["k_pos"], vespo_lambda_pos=m.vespo["lambda_pos"],
        vespo_k_neg=m.vespo["k_neg"], vespo_lambda_neg=m.vespo["lambda_neg"],
    )
    if "low_clipped" in extras:
        is_clipped = extras["low_clipped"] | extras["high_clipped"]
    else:  # CISPO's truncation counts as clipped; SAPO and VESPO never clip
        is_clipped = extras.get("cispo_clipped", torch.zeros_like(log_iw, dtype=torch.bool))
    if is_ratio is not None and m.loss_type != "vespo":
        per_token_loss = per_token_loss * is_ratio
    if m.beta != 0.0:
        kl = k3_kl(logps, ref)
        if m.use_bias_correction_kl:
            kl = kl * torch.exp(log_iw)
        per_token_loss = per_token_loss + m.beta * kl
    n_tokens = mask.sum().clamp(min=1.0)
    if m.loss_type in ("grpo", "sapo"):
        loss = ((per_token_loss * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)).sum() / mask.shape[0]
    elif m.loss_type == "bnpo":
        loss = (per_token_loss * mask).sum() / n_tokens
    elif m.loss_type == "dr_grpo":
        if m.max_completion_length is None:
            raise ValueError("max_completion_length must be provided for loss_type 'dr_grpo'")
        loss = (per_token_loss * mask).sum() / (mask.shape[0] * m.max_completion_length)
    elif m.loss_type in ("dapo", "cispo", "vespo"):
        world = torch.distributed.get_world_size() if torch.distributed.is_initialized() else 1
        if num_items_in_batch is not None:
            normalizer = torch.as_tensor(num_items_in_batch, dtype=torch.float32, device=mask.device) / world
        else:
            normalizer = mask.float().sum()
            if world > 1:
                torch.distributed.all_reduce(normalizer)
            normalizer = normalizer / world
        loss = (per_token_loss * mask).sum() / normalizer.clamp(min=1.0)
    elif m.loss_type == "luspo":
        weighted = per_token_loss * mask.sum(1, keepdim=True)
        loss = weighted.sum() / (mask.shape[0] * weighted.shape[1])
    else:
        raise ValueError(f"Unknown loss type: {m.loss_type}")
    metrics = []
    with torch.no_grad():
        if m.beta != 0.0:
            metrics.append((kl * mask).sum() / n_tokens)
        metrics.append((is_clipped.expand_as(mask) * mask).sum() / n_tokens)
    return loss, tuple(metrics)


class FusedLinearJSDLoss(nn.Module):
    """TRL 1.13 ``trl.losses.FusedLinearJSDLoss``: ``weight_soft * JSD(student, teacher) / n + weight_hard * CE / n``
    over ``[N, H]`` inputs, ``n`` = number of labels that are not ``ignore_index``.

    ``forward(student_input, student_weight, teacher_input, teacher_weight, true_labels, student_bias=None,
    teacher_bias=None)`` returns the loss, or ``(loss, soft_loss, hard_loss)`` with ``return_soft_hard_loss``.
    """

    def __init__(
        self,
        weight_hard_loss: float = 0.5,
        weight_soft_loss: float = 0.5,
        beta: float = 0.5,
        ignore_index: int = -100,
        temperature: float = 1.0,
        compiled: bool = True,
        chunk_size: int = 1024,
        return_soft_hard_loss: bool = False,
    ):
        super().__init__()
        if temperature == 0:
            raise ValueError("temperature cannot be 0.")
        self.weight_hard_loss = weight_hard_loss
        self.weight_soft_loss = weight_soft_loss
        self.beta = beta
        self.ignore_index = ignore_index
        self.temperature = temperature
        self.compiled = compiled
        self.chunk_size = chunk_size
        self.return_soft_hard_loss = return_soft_hard_loss

    def forward(
        self,
        student_input: torch.Tensor,
        student_weight: torch.Tensor,
        teacher_input: torch.Tensor,
        teacher_weight: torch.Tensor,
        true_labels: torch.LongTensor,
        student_bias: torch.Tensor | None = None,
        teacher_bias: torch.Tensor | None = None,
    ):
        if teacher_weight.shape[0] != student_weight.shape[0]:
            raise ValueError(
                f"student and teacher vocabularies differ ({student_weight.shape[0]} vs {teacher_weight.shape[0]}); "
                "pad the student head to the teacher's vocabulary first"
            )
        labels = true_labels.reshape(-1)
        valid = labels != self.ignore_index
        n = valid.sum().clamp_min(1)
        hard = -chunked_logprobs(
            student_input, student_weight, labels, bias=student_bias, ignore_index=self.ignore_index
        )["logp"].sum() / n
        soft = chunked_divergence(
            student_input,
            student_weight,
            teacher_input,
            teacher_weight,
            beta=self.beta,
            temperature=self.temperature,
            mask=valid,
            student_bias=student_bias,
            teacher_bias=teacher_bias,
        )["divergence"].sum() / n
        loss = self.weight_hard_loss * hard + self.weight_soft_loss * soft
        if self.return_soft_hard_loss:
            return loss, soft.detach(), hard.detach()
        return loss
