"""Every loss family on top of the engine against the same loss on a naive full-logits reference.

This file tests the *engine* under each loss (statistics, gradients, dtypes, the TRL 1.13 adapters' wiring): the loss
function is the same on both sides, so it cannot catch a wrong coefficient. The loss maths is tested against
written-out float64 formulas in ``test_losses.py``.

Oracle: the loss function evaluated on per-token statistics from ``tests/reference_impl/_naive.py`` (full ``[N, V]``
float64 logits, ordinary autograd). Inputs are float64, so loss and gradients of hidden, weight and bias must agree to
1e-9; a bf16 case checks that the engine is at least as close to fp64 as the naive bf16 path. The TRL comparisons are
in ``test_against_trl.py``.
"""

from __future__ import annotations

import pytest
import torch

from reference_impl.chunking import chunked_logprobs
from reference_impl.losses import (
    DPO_LOSS_TYPES,
    GRPO_LOSS_TYPES,
    FusedLinearDPOLoss,
    FusedLinearGRPOLoss,
    FusedLinearJSDLoss,
    FusedLinearKTOLoss,
    RunningMoments,
    bco_loss,
    cpo_loss,
    dft_loss,
    distillation_loss,
    dpo_loss,
    generalized_jsd_loss,
    grpo_loss,
    kto_loss,
    nll_loss,
    orpo_loss,
    rloo_advantages,
    rloo_loss,
    sequence_logps,
    simpo_loss,
    udm_density_ratio_weights,
)

from ._naive import naive_stats, rel_err

F64 = torch.float64
B, T, H, V = 4, 11, 12, 503  # 2B = 8 sequences; V prime


def _setup(seed=0, rows=2 * B, dtype=F64):
    g = torch.Generator().manual_seed(seed)
    hidden = torch.randn(rows, T, H, generator=g, dtype=F64).to(dtype)
    weight = (torch.randn(V, H, generator=g, dtype=F64) * 0.4).to(dtype)
    bias = (torch.randn(V, generator=g, dtype=F64) * 0.1).to(dtype)
    ids = torch.randint(0, V, (rows, T), generator=g)
    mask = torch.zeros(rows, T, dtype=torch.long)
    for i in range(rows):
        mask[i, 2 + i % 3 : T - i % 4] = 1
    mask[-1] = 0 if rows > 2 else mask[-1]  # an all-masked row
    targets = ids.masked_fill(mask == 0, -100)
    ref_weight = weight + (torch.randn(V, H, generator=g, dtype=F64) * 0.05).to(dtype)
    return hidden, weight, bias, targets, mask, ref_weight


def _stats(which, hidden, weight, bias, targets, outputs=("logp", "entropy", "logsumsq", "mean_logit")):
    if which == "engine":
        return chunked_logprobs(hidden, weight, targets, bias=bias, chunk=4, outputs=outputs)
    flat = naive_stats(hidden.reshape(-1, H), weight, targets.reshape(-1), bias=bias)
    return {k: flat[k].reshape(targets.shape) for k in outputs}


def _compare(loss_of, seed=0, rows=2 * B, atol=1e-9):
    """``loss_of(stats_fn, hidden, weight, bias, targets, mask, ref_weight) -> scalar`` through both paths."""
    results = []
    for which in ("engine", "naive"):
        hidden, weight, bias, targets, mask, ref_weight = _setup(seed, rows)
        params = [hidden.requires_grad_(), weight.requires_grad_(), bias.requires_grad_()]

        def stats(h, w, b, t, outputs=("logp", "entropy", "logsumsq", "mean_logit"), which=which):
            return _stats(which, h, w, b, t, outputs)

        stats.which = which
        loss = loss_of(stats, hidden, weight, bias, targets, mask, ref_weight)
        results.append((loss.detach(), torch.autograd.grad(loss, params)))
    (l1, g1), (l2, g2) = results
    torch.testing.assert_close(l1, l2, atol=atol, rtol=atol)
    for a, b in zip(g1, g2, strict=True):
        torch.testing.assert_close(a, b, atol=atol, rtol=1e-7)


def _ref_logps(stats, hidden, ref_weight, bias, targets):
    with torch.no_grad():
        return stats(hidden, ref_weight, bias, targets, ("logp",))["logp"]


@pytest.mark.parametrize("fn", [nll_loss, dft_loss])
def test_sft(fn):
    def loss_of(stats, h, w, b, t, mask, _):
        s = stats(h, w, b, t)
        return fn(s["logp"], mask)[0]

    _compare(loss_of)


@pytest.mark.parametrize("loss_type", DPO_LOSS_TYPES)
def test_dpo_loss_types(loss_type):
    def loss_of(stats, h, w, b, t, mask, ref_w):
        s = stats(h, w, b, t)
        ref = _ref_logps(stats, h, ref_w, b, t)
        ls = 0.1 if loss_type in ("exo_pair", "robust", "aot", "aot_unpaired") else 0.0
        return dpo_loss(s["logp"], mask, ref, beta=0.2, loss_type=loss_type, label_smoothing=ls)[0]

    _compare(loss_of)


def test_dpo_combined_wpo_ld_alpha_f_divergence():
    def loss_of(stats, h, w, b, t, mask, ref_w):
        s = stats(h, w, b, t)
        ref = _ref_logps(stats, h, ref_w, b, t)
        total = dpo_loss(s["logp"], mask, ref, loss_type=["sigmoid", "sft"], loss_weights=[1.0, 0.5],
                         use_weighting=True, log_sum_sq_probs=s["logsumsq"], ld_alpha=0.5)[0]
        total = total + dpo_loss(s["logp"], mask, ref, f_divergence_type="js_divergence")[0]
        return total + dpo_loss(s["logp"], mask, None, reference_free=True, loss_type="ipo")[0]

    _compare(loss_of)


@pytest.mark.parametrize("variant", ["sigmoid", "hinge", "ipo", "simpo", "alphapo", "simpo_fn", "orpo"])
def test_cpo_simpo_orpo(variant):
    def loss_of(stats, h, w, b, t, mask, _):
        logp = stats(h, w, b, t)["logp"]
        if variant == "simpo_fn":
            return simpo_loss(logp, mask, beta=2.0, gamma=0.5, sft_weight=0.1)[0]
        if variant == "orpo":
            return orpo_loss(logp / 10, mask, beta=0.1)[0]  # scaled: odds of near-1 probabilities are extreme
        if variant == "alphapo":
            return cpo_loss(logp / 10, mask, loss_type="sigmoid", alpha=0.2)[0]
        return cpo_loss(logp, mask, loss_type=variant, beta=0.1)[0]

    _compare(loss_of)


@pytest.mark.parametrize("loss_type", ["kto", "apo_zero_unpaired"])
def test_kto(loss_type):
    labels = torch.tensor([True, False, True, True, False, False, True, False])

    def loss_of(stats, h, w, b, t, mask, ref_w):
        logp = sequence_logps(stats(h, w, b, t)["logp"], mask)
        ref = sequence_logps(_ref_logps(stats, h, ref_w, b, t), mask)
        kl_t = t.roll(1, dims=0)  # mismatched completions for the KL estimate
        kl = sequence_logps(stats(h, w, b, kl_t)["logp"], mask.roll(1, 0)).detach()
        ref_kl = sequence_logps(_ref_logps(stats, h, ref_w, b, kl_t), mask.roll(1, 0))
        return kto_loss(logp, ref, labels, loss_type=loss_type, beta=0.3, desirable_weight=1.2,
                        policy_kl_logps=kl, ref_kl_logps=ref_kl)[0]

    _compare(loss_of)


def test_bco_with_running_baseline_and_udm():
    labels = torch.tensor([True, False, True, True, False, False, True, False])
    prob = torch.linspace(0.1, 0.9, 4, dtype=F64)

    def loss_of(stats, h, w, b, t, mask, ref_w):
        logp = sequence_logps(stats(h, w, b, t)["logp"], mask)
        ref = sequence_logps(_ref_logps(stats, h, ref_w, b, t), mask)
        running = RunningMoments()
        running.update(torch.tensor([0.3, -0.2, 0.5]))
        return bco_loss(logp, ref, labels, beta=0.1, running=running,
                        rejected_weights=udm_density_ratio_weights(prob))[0]

    _compare(loss_of)


@pytest.mark.parametrize("loss_type", GRPO_LOSS_TYPES)
@pytest.mark.parametrize("level", ["token", "sequence"])
def test_grpo_loss_types(loss_type, level):
    adv = torch.linspace(-1, 1, 2 * B, dtype=F64)

    def loss_of(stats, h, w, b, t, mask, ref_w):
        s = stats(h, w, b, t)
        logp = s["logp"]
        old = (logp.detach() + 0.05 * torch.cos(torch.arange(logp.numel(), dtype=F64)).view_as(logp)) * mask
        ref = _ref_logps(stats, h, ref_w, b, t)
        return grpo_loss(logp, mask, adv, old_per_token_logps=old, ref_per_token_logps=ref, loss_type=loss_type,
                         beta=0.04, importance_sampling_level=level, entropies=s["entropy"], entropy_coef=0.01,
                         max_completion_length=T)[0]

    _compare(loss_of)


def test_rloo():
    rewards = torch.tensor([1.0, 0.0, 0.5, 0.2, float("nan"), 1.0, 0.3, 0.9], dtype=F64)

    def loss_of(stats, h, w, b, t, mask, ref_w):
        logp = stats(h, w, b, t)["logp"]
        old = logp.detach() * mask
        ref = _ref_logps(stats, h, ref_w, b, t)
        adv, _ = rloo_advantages(rewards, 4, beta=0.05, old_per_token_logps=old, ref_per_token_logps=ref, mask=mask,
                                 normalize_advantages=True)
        return rloo_loss(logp, mask, adv, (old * mask).sum(1) - 0.1)[0]

    _compare(loss_of)


def test_rloo_advantages_leave_one_out():
    """Hand-checked: each advantage is the reward minus the mean of its siblings; unscorable rows get 0."""
    rewards = torch.tensor([1.0, 0.0, 0.5, float("nan"), 2.0, 4.0])
    adv, _ = rloo_advantages(rewards, 3)
    expected = torch.tensor([1.0 - 0.25, 0.0 - 0.75, 0.5 - 0.5, 0.0, 2.0 - 4.0, 4.0 - 2.0])
    torch.testing.assert_close(adv, expected)


@pytest.mark.parametrize("beta", [0.0, 0.5, 1.0])
def test_distillation(beta):
    def loss_of(stats, h, w, b, t, mask, ref_w):
        teacher_h = h.detach().flip(0)
        if stats.which == "engine":
            return distillation_loss(h, w, teacher_h, ref_w, mask, beta=beta, student_bias=b, temperature=0.9,
                                     chunk=3)[0]
        labels = t.masked_fill(mask == 0, -100)
        return generalized_jsd_loss(h @ w.t() + b, teacher_h @ ref_w.t(), labels, beta=beta, temperature=0.9)

    _compare(loss_of)


# ------------------------------------------------------------------------------------------------------------------
# the TRL 1.13 ``trl.losses`` adapters: same inputs through the adapter and through the naive-logits loss math


def test_fused_linear_dpo_adapter_matches_loss_math():
    hidden, weight, bias, targets, mask, ref_weight = _setup(1)
    hidden.requires_grad_()
    weight.requires_grad_()
    loss, aux = FusedLinearDPOLoss(beta=0.2, compute_nll_loss=True, use_ref_model=True)(
        weight, hidden, targets, bias, hidden.detach(), ref_weight, bias
    )
    s = _stats("naive", hidden, weight, bias, targets)
    ref = _stats("naive", hidden.detach(), ref_weight, bias, targets)
    want, _ = dpo_loss(s["logp"], mask, ref["logp"], beta=0.2)
    nll = -(s["logp"][:B] * mask[:B]).sum() / mask[:B].sum()
    torch.testing.assert_close(loss, want + nll)
    assert aux[0].shape == (B,) and aux[5].shape == (B,)
    logits = hidden.detach()[:B] @ weight.detach().t() + bias
    torch.testing.assert_close(aux[2], logits.mean())


def test_fused_linear_kto_and_grpo_and_jsd_adapters_run_and_match():
    hidden, weight, bias, targets, mask, ref_weight = _setup(2)
    labels = torch.tensor([True, False] * B)
    loss, aux = FusedLinearKTOLoss(beta=0.1, use_ref_model=True)(
        hidden, weight, targets, bias, labels, hidden, ref_weight, bias, torch.tensor(0.05, dtype=F64)
    )
    s = sequence_logps(_stats("naive", hidden, weight, bias, targets)["logp"], mask)
    r = sequence_logps(_stats("naive", hidden, ref_weight, bias, targets)["logp"], mask)
    lr = s - r
    want = (1 - torch.sigmoid(0.1 * (lr - 0.05) * torch.where(labels, 1.0, -1.0))).sum() / (2 * B)
    torch.testing.assert_close(loss, want)
    torch.testing.assert_close(aux[4], (0.1 * lr * labels).sum())

    ids = targets.clamp(min=0)
    adv = torch.linspace(-1, 1, 2 * B, dtype=F64)
    loss, metrics = FusedLinearGRPOLoss(beta=0.0, loss_type="bnpo")(hidden, weight, ids, mask, adv, bias)
    logp = _stats("naive", hidden, weight, bias, ids)["logp"]
    want, _ = grpo_loss(logp, mask, adv, loss_type="bnpo")
    torch.testing.assert_close(loss, want)
    assert len(metrics) == 1

    jsd = FusedLinearJSDLoss(beta=0.5, temperature=1.0, return_soft_hard_loss=True)
    flat_t = targets.reshape(-1)
    loss, soft, hard = jsd(hidden.reshape(-1, H), weight, hidden.reshape(-1, H), ref_weight, flat_t, bias, bias)
    zs = hidden.reshape(-1, H) @ weight.t() + bias
    zt = hidden.reshape(-1, H) @ ref_weight.t() + bias
    torch.testing.assert_close(soft, generalized_jsd_loss(zs, zt, flat_t, beta=0.5))
    torch.testing.assert_close(hard, torch.nn.functional.cross_entropy(zs, flat_t))
    torch.testing.assert_close(loss, 0.5 * soft + 0.5 * hard)


def test_bf16_dpo_engine_at_least_as_close_as_naive_bf16():
    """bf16 inputs through DPO: the engine's loss and gradients are at least as close to fp64 as naive bf16's."""
    def run(dtype, path):
        hidden, weight, bias, targets, mask, ref_weight = _setup(3, dtype=torch.bfloat16)
        hidden, weight, bias = (x.to(dtype).requires_grad_() for x in (hidden, weight, bias))
        if path == "engine":
            logp = chunked_logprobs(hidden, weight, targets, bias=bias, chunk=64)["logp"]
        else:
            logits = hidden @ weight.t() + bias
            logits = logits.float() if dtype != F64 else logits
            logp = torch.log_softmax(logits, -1).gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1) * mask
        ref = torch.zeros(2 * B, dtype=logp.dtype)
        loss, _ = dpo_loss(logp.to(F64), mask, ref, beta=0.5)
        return (loss, *torch.autograd.grad(loss, [hidden, weight, bias]))

    exact = run(F64, "naive")
    naive = run(torch.bfloat16, "naive")
    engine = run(torch.bfloat16, "engine")
    for name, e, n, x in zip(["loss", "dh", "dW", "db"], engine, naive, exact, strict=True):
        assert rel_err(e, x) <= 1.1 * rel_err(n, x) + 1e-6, name
