"""The loss maths against the papers' equations, written out again here in float64.

Each oracle below is the equation itself (per pair / per sequence / per token, with explicit loops where that reads
closer to the paper), computed with plain ``torch.float64`` scalar ops on small random tensors; none calls the
function under test or shares a helper with it. So a wrong coefficient in ``reference_impl/losses`` (beta doubled, a
sign flipped, a clip bound moved, a 0.5 changed) fails here without TRL installed;
``benchmarks/loss_mutants.py`` proves it by applying such mutations one at a time and running this file.
The engine under the losses is tested in ``test_losses_on_engine.py`` and ``test_chunking.py``; TRL itself is the
oracle in ``test_against_trl.py``.
"""

from __future__ import annotations

import math

import pytest
import torch

from reference_impl.losses import (
    DPO_LOSS_TYPES,
    GRPO_LOSS_TYPES,
    FusedLinearDPOLoss,
    FusedLinearGRPOLoss,
    FusedLinearJSDLoss,
    FusedLinearKTOLoss,
    RunningMoments,
    a2po_loss,
    bco_loss,
    cpo_loss,
    dft_loss,
    distillation_loss,
    dpo_loss,
    generalized_jsd_loss,
    grpo_loss,
    jsd_with_hard_loss,
    kto_loss,
    nash_md_loss,
    nll_loss,
    optimal_value,
    orpo_loss,
    reward_loss,
    rloo_advantages,
    rloo_loss,
    simpo_loss,
    udm_density_ratio_weights,
    xpo_loss,
)

F64 = torch.float64
B, T = 3, 6  # pairs (2B rows) / sequences, tokens


def close(actual, expected, tol=1e-10):
    torch.testing.assert_close(torch.as_tensor(actual, dtype=F64), torch.as_tensor(expected, dtype=F64),
                               atol=tol, rtol=tol)


def rand(*shape, seed=0, lo=-2.0, hi=-0.05):
    g = torch.Generator().manual_seed(seed)
    return lo + (hi - lo) * torch.rand(*shape, generator=g, dtype=F64)


def lengths_mask(rows, seed=0):
    """``[rows, T]`` completion masks of different lengths (each row >= 2 tokens, some starting late)."""
    mask = torch.zeros(rows, T, dtype=F64)
    for i in range(rows):
        start, end = i % 2, T - (i * 2) % 3
        mask[i, start:end] = 1
    return mask


def seq_sum(x, mask, i):
    return sum(float(x[i, t]) for t in range(x.shape[1]) if mask[i, t] > 0)


def seq_len(mask, i):
    return float(mask[i].sum())


def logsig(x):
    return -math.log1p(math.exp(-x)) if x > 0 else x - math.log1p(math.exp(x))


def sig(x):
    return 1 / (1 + math.exp(-x))


# ---------------------------------------------------------------------------------------------------------- SFT
def test_nll_and_dft_formulas_and_gradients():
    lp, mask = rand(4, T, seed=1).requires_grad_(), lengths_mask(4)
    n = float(mask.sum())
    want_nll = -sum(float(lp.detach()[i, t]) * float(mask[i, t]) for i in range(4) for t in range(T)) / n
    loss, m = nll_loss(lp, mask)
    close(loss, want_nll)
    close(m["num_tokens"], n)
    loss, _ = nll_loss(lp, mask, num_items_in_batch=7)
    close(loss, want_nll * n / 7)
    # DFT (arXiv 2508.05629, Eq. 8): -sum sg(p) log p / N; the gradient w.r.t. log p is -sg(p) / N
    loss, _ = dft_loss(lp, mask)
    v = lp.detach()
    close(loss, -sum(math.exp(float(v[i, t])) * float(v[i, t]) * float(mask[i, t])
                     for i in range(4) for t in range(T)) / n)
    (grad,) = torch.autograd.grad(loss, lp)
    close(grad, -lp.detach().exp() * mask / n)


def test_sft_metrics():
    lp, mask = rand(4, T, seed=2), lengths_mask(4)
    ent, top1 = rand(4, T, seed=3, lo=0.0, hi=3.0), (rand(4, T, seed=4) > -1.0).to(F64)
    _, m = nll_loss(lp, mask, entropy=ent, is_top1=top1)
    close(m["entropy"], float((ent * mask).sum() / mask.sum()), 1e-6)
    close(m["mean_token_accuracy"], float((top1 * mask).sum() / mask.sum()), 1e-6)


# ----------------------------------------------------------------------------------------------------- the DPO family
def _pairs(seed=0):
    """Per-token policy / reference log-probs ``[2B, T]`` (chosen rows first) and the completion mask."""
    mask = lengths_mask(2 * B)
    policy = rand(2 * B, T, seed=seed, lo=-1.6, hi=-0.05) * mask  # 0 off the completion, as the engine returns
    ref = (policy + 0.4 * (rand(2 * B, T, seed=seed + 100, lo=-1.0, hi=1.0))) * mask
    return policy, ref, mask


def dpo_oracle(loss_type, policy, ref, mask, beta, eps=0.0, tau=0.05):
    """The per-pair losses of each DPO variant, then their mean (the equations in ``dpo_loss``'s docstring)."""
    lw = [seq_sum(policy, mask, i) for i in range(B)]
    ll = [seq_sum(policy, mask, B + i) for i in range(B)]
    rw = [seq_sum(ref, mask, i) for i in range(B)]
    rl = [seq_sum(ref, mask, B + i) for i in range(B)]
    nw = [seq_len(mask, i) for i in range(B)]
    nl = [seq_len(mask, B + i) for i in range(B)]
    c = [lw[i] - rw[i] for i in range(B)]  # chosen log-ratio
    r = [ll[i] - rl[i] for i in range(B)]  # rejected log-ratio
    losses = []
    if loss_type in ("aot", "aot_unpaired"):
        if loss_type == "aot":
            policy_sorted = sorted(lw[i] - ll[i] for i in range(B))
            ref_sorted = sorted(rw[i] - rl[i] for i in range(B))
            x = [a - b for a, b in zip(policy_sorted, ref_sorted)]
        else:
            x = [a - b for a, b in zip(sorted(c), sorted(r))]
        return sum(-(1 - eps) * logsig(beta * xi) - eps * logsig(-beta * xi) for xi in x) / B
    for i in range(B):
        d = c[i] - r[i]
        if loss_type == "sigmoid":
            loss = -logsig(beta * d)
        elif loss_type == "hinge":
            loss = max(0.0, 1 - beta * d)
        elif loss_type == "ipo":
            loss = (c[i] / nw[i] - r[i] / nl[i] - 1 / (2 * beta)) ** 2
        elif loss_type == "exo_pair":
            loss = (sig(beta * d) * (logsig(beta * d) - math.log(1 - eps))
                    + sig(-beta * d) * (logsig(-beta * d) - math.log(eps)))
        elif loss_type == "nca_pair":
            loss = -logsig(beta * c[i]) - 0.5 * logsig(-beta * c[i]) - 0.5 * logsig(-beta * r[i])
        elif loss_type == "robust":
            loss = (-(1 - eps) * logsig(beta * d) + eps * logsig(-beta * d)) / (1 - 2 * eps)
        elif loss_type == "bco_pair":
            loss = -logsig(beta * c[i]) - logsig(-beta * r[i])
        elif loss_type == "sppo_hard":
            loss = (c[i] - 1 / (2 * beta)) ** 2 + (r[i] + 1 / (2 * beta)) ** 2
        elif loss_type == "apo_zero":
            loss = (1 - sig(beta * c[i])) + sig(beta * r[i])
        elif loss_type == "apo_down":
            loss = sig(beta * c[i]) + (1 - sig(beta * (c[i] - r[i])))
        elif loss_type == "discopop":
            mod = sig(beta * d / tau)
            loss = -logsig(beta * d) * (1 - mod) + math.exp(-beta * d) * mod
        elif loss_type == "sft":  # mean token NLL over all chosen tokens (the same value for every pair)
            toks = [float(policy[j, t]) for j in range(B) for t in range(T) if mask[j, t] > 0]
            loss = -sum(toks) / len(toks)
        elif loss_type == "sigmoid_norm":
            loss = -logsig(beta * (c[i] / nw[i] - r[i] / nl[i]))
        else:
            raise AssertionError(loss_type)
        losses.append(loss)
    return sum(losses) / B


EPS_OF = {"exo_pair": 1e-2, "robust": 0.1, "aot": 0.1, "aot_unpaired": 0.1}


@pytest.mark.parametrize("loss_type", DPO_LOSS_TYPES)
def test_dpo_every_loss_type(loss_type):
    policy, ref, mask = _pairs(seed=11)
    eps = EPS_OF.get(loss_type, 0.0)
    for beta in (0.3, 0.07):
        loss, _ = dpo_loss(policy, mask, ref, beta=beta, loss_type=loss_type, label_smoothing=eps,
                           discopop_tau=0.05)
        close(loss, dpo_oracle(loss_type, policy, ref, mask, beta, eps=eps, tau=0.05))


def test_dpo_metrics_are_the_implicit_rewards():
    policy, ref, mask = _pairs(seed=12)
    beta = 0.3
    ent, ml = rand(2 * B, T, seed=5, lo=0, hi=3), rand(2 * B, T, seed=6, lo=-1, hi=1)
    top1 = (rand(2 * B, T, seed=7) > -1).to(F64)
    _, m = dpo_loss(policy, mask, ref, beta=beta, entropy=ent, mean_logits=ml, is_top1=top1)
    cr = [beta * (seq_sum(policy, mask, i) - seq_sum(ref, mask, i)) for i in range(B)]
    rr = [beta * (seq_sum(policy, mask, B + i) - seq_sum(ref, mask, B + i)) for i in range(B)]
    close(m["rewards/chosen"], sum(cr) / B, 1e-6)
    close(m["rewards/rejected"], sum(rr) / B, 1e-6)
    close(m["rewards/margins"], (sum(cr) - sum(rr)) / B, 1e-6)
    close(m["rewards/accuracies"], sum(a > b for a, b in zip(cr, rr)) / B, 1e-6)
    close(m["logps/chosen"], sum(seq_sum(policy, mask, i) for i in range(B)) / B, 1e-6)
    cm, rm = mask[:B], mask[B:]
    close(m["entropy"], float((ent * mask).sum() / mask.sum()), 1e-6)
    close(m["logits/chosen"], float((ml[:B] * cm).sum() / cm.sum()), 1e-6)
    close(m["logits/rejected"], float((ml[B:] * rm).sum() / rm.sum()), 1e-6)
    close(m["mean_token_accuracy"], float((top1[:B] * cm).sum() / cm.sum()), 1e-6)


def test_dpo_combined_loss_weights_and_reference_forms():
    policy, ref, mask = _pairs(seed=13)
    beta = 0.2
    loss, _ = dpo_loss(policy, mask, ref, beta=beta, loss_type=["sigmoid", "sft", "hinge"],
                       loss_weights=[0.8, 0.3, 2.0])
    close(loss, 0.8 * dpo_oracle("sigmoid", policy, ref, mask, beta) + 0.3 * dpo_oracle("sft", policy, ref, mask, beta)
          + 2.0 * dpo_oracle("hinge", policy, ref, mask, beta))
    # precomputed [2B] reference sums, and reference-free (log pi_ref = 0)
    ref_seq = torch.tensor([seq_sum(ref, mask, i) for i in range(2 * B)], dtype=F64)
    close(dpo_loss(policy, mask, ref_seq, beta=beta)[0], dpo_oracle("sigmoid", policy, ref, mask, beta))
    close(dpo_loss(policy, mask, None, beta=beta, reference_free=True)[0],
          dpo_oracle("sigmoid", policy, torch.zeros_like(ref), mask, beta))


@pytest.mark.parametrize("f_type", ["forward_kl", "js_divergence", "alpha_divergence"])
def test_dpo_f_divergences(f_type):
    """f-DPO (arXiv 2309.16240): the sigmoid loss on ``f'(pi/pi_ref)`` differences."""
    policy, ref, mask = _pairs(seed=14)
    beta, alpha = 0.3, 0.4
    if f_type == "forward_kl":
        score = lambda x: 1 - math.exp(-x)
    elif f_type == "js_divergence":
        score = lambda x: math.log(2) + logsig(x)
    else:
        score = lambda x: (math.exp((alpha - 1) * x) - 1) / (alpha - 1)
    want = 0.0
    for i in range(B):
        c = seq_sum(policy, mask, i) - seq_sum(ref, mask, i)
        r = seq_sum(policy, mask, B + i) - seq_sum(ref, mask, B + i)
        want += -logsig(beta * (score(c) - score(r))) / B
    tol = 1e-10 if f_type != "alpha_divergence" else 1e-7  # TRL takes the alpha exp in float32
    loss, _ = dpo_loss(policy, mask, ref, beta=beta, f_divergence_type=f_type, f_alpha_divergence_coef=alpha)
    close(loss, want, tol)
    # IPO divides each score by its length, so constants in f' (JS's log 2) no longer cancel
    want = 0.0
    for i in range(B):
        c = seq_sum(policy, mask, i) - seq_sum(ref, mask, i)
        r = seq_sum(policy, mask, B + i) - seq_sum(ref, mask, B + i)
        want += (score(c) / seq_len(mask, i) - score(r) / seq_len(mask, B + i) - 1 / (2 * beta)) ** 2 / B
    loss, _ = dpo_loss(policy, mask, ref, beta=beta, loss_type="ipo", f_divergence_type=f_type,
                       f_alpha_divergence_coef=alpha)
    close(loss, want, tol)


def test_dpo_ld_alpha_and_wpo_weighting():
    policy, ref, mask = _pairs(seed=15)
    beta, ld = 0.3, 0.4
    # LD-DPO (arXiv 2409.06411): tokens past the shorter completion of the pair count ld_alpha times
    def ld_sum(x, row, pair):
        shared = int(min(seq_len(mask, pair), seq_len(mask, B + pair)))
        vals = [float(x[row, t]) for t in range(T) if mask[row, t] > 0]
        return sum(vals[:shared]) + ld * sum(vals[shared:])

    want = 0.0
    for i in range(B):
        c = ld_sum(policy, i, i) - ld_sum(ref, i, i)
        r = ld_sum(policy, B + i, i) - ld_sum(ref, B + i, i)
        want += -logsig(beta * (c - r)) / B
    close(dpo_loss(policy, mask, ref, beta=beta, ld_alpha=ld)[0], want)
    # WPO (arXiv 2406.11827, Eq. 2): pair loss * w(y_w) * w(y_l), w = exp(mean_t (log p - log sum_v p_v^2))
    lssp = rand(2 * B, T, seed=16, lo=-2.0, hi=-0.5)
    def w(row):
        return math.exp(sum(float(policy[row, t] - lssp[row, t]) for t in range(T) if mask[row, t] > 0)
                        / seq_len(mask, row))

    want = 0.0
    for i in range(B):
        c = seq_sum(policy, mask, i) - seq_sum(ref, mask, i)
        r = seq_sum(policy, mask, B + i) - seq_sum(ref, mask, B + i)
        want += -logsig(beta * (c - r)) * w(i) * w(B + i) / B
    close(dpo_loss(policy, mask, ref, beta=beta, use_weighting=True, log_sum_sq_probs=lssp)[0], want)


# ------------------------------------------------------------------------------------------------ CPO, SimPO, ORPO
def _avg(policy, mask, i):
    return seq_sum(policy, mask, i) / seq_len(mask, i)


def _chosen_nll(policy, mask):
    toks = [float(policy[j, t]) for j in range(B) for t in range(T) if mask[j, t] > 0]
    return -sum(toks) / len(toks)


@pytest.mark.parametrize("loss_type", ["sigmoid", "hinge", "ipo", "simpo"])
def test_cpo(loss_type):
    """CPO (arXiv 2401.08417, Eq. 3) and its TRL variants, plus cpo_alpha * NLL of the chosen completions."""
    policy, _, mask = _pairs(seed=21)
    beta, eps, gamma, cpo_alpha = 0.4, 0.1, 0.7, 0.6
    average = loss_type in ("ipo", "simpo")
    want = 0.0
    for i in range(B):
        w = _avg(policy, mask, i) if average else seq_sum(policy, mask, i)
        lo = _avg(policy, mask, B + i) if average else seq_sum(policy, mask, B + i)
        x = w - lo
        if loss_type == "sigmoid":
            want += -(1 - eps) * logsig(beta * x) - eps * logsig(-beta * x)
        elif loss_type == "hinge":
            want += max(0.0, 1 - beta * x)
        elif loss_type == "ipo":
            want += (x - 1 / (2 * beta)) ** 2
        else:  # SimPO's margin inside: beta * x - gamma
            want += -(1 - eps) * logsig(beta * x - gamma) - eps * logsig(-(beta * x - gamma))
    want = want / B + cpo_alpha * _chosen_nll(policy, mask)
    loss, m = cpo_loss(policy, mask, beta=beta, loss_type=loss_type, label_smoothing=eps, simpo_gamma=gamma,
                       cpo_alpha=cpo_alpha)
    close(loss, want)
    close(m["nll_loss"], _chosen_nll(policy, mask), 1e-6)


def test_alphapo_reward_shaping():
    """AlphaPO (arXiv 2501.03884): r = (1 - p^(-alpha)) / alpha on the sequence probability, sigmoid loss."""
    policy, _, mask = _pairs(seed=22)
    policy = policy / 5  # keep p^(-alpha) moderate
    beta, alpha = 0.5, 0.3
    want = 0.0
    for i in range(B):
        rw = (1 - math.exp(seq_sum(policy, mask, i)) ** (-alpha)) / alpha
        rl = (1 - math.exp(seq_sum(policy, mask, B + i)) ** (-alpha)) / alpha
        want += -logsig(beta * (rw - rl)) / B
    close(cpo_loss(policy, mask, beta=beta, alpha=alpha, cpo_alpha=0.0)[0], want)


def test_simpo():
    """SimPO (arXiv 2405.14734, Eq. 6): -log sig(beta * (avg logp_w - avg logp_l) - gamma) + sft_weight * NLL."""
    policy, _, mask = _pairs(seed=23)
    beta, gamma, sft = 2.0, 0.5, 0.25
    want = sum(-logsig(beta * (_avg(policy, mask, i) - _avg(policy, mask, B + i)) - gamma) for i in range(B)) / B
    close(simpo_loss(policy, mask, beta=beta, gamma=gamma, sft_weight=sft)[0], want + sft * _chosen_nll(policy, mask))


def test_orpo():
    """ORPO (arXiv 2403.07691, Eqs. 4 and 7): NLL_w - beta * mean log sig(log odds(y_w) - log odds(y_l))."""
    policy, _, mask = _pairs(seed=24)
    beta = 0.3
    ratios = []
    for i in range(B):
        pw, pl = _avg(policy, mask, i), _avg(policy, mask, B + i)
        log_odds = (pw - math.log(1 - math.exp(pw))) - (pl - math.log(1 - math.exp(pl)))
        ratios.append(logsig(log_odds))
    loss, m = orpo_loss(policy, mask, beta=beta)
    close(loss, _chosen_nll(policy, mask) - beta * sum(ratios) / B)
    close(m["log_odds_ratio"], sum(ratios) / B, 1e-6)


# ------------------------------------------------------------------------------------------------------- KTO, BCO
LABELS = torch.tensor([True, False, True, True, False, False])


def _unpaired(seed):
    policy = rand(6, seed=seed, lo=-12.0, hi=-3.0)
    ref = policy + rand(6, seed=seed + 1, lo=-1.5, hi=1.5)
    return policy, ref


@pytest.mark.parametrize("kl_sign", [1.0, -1.0])
def test_kto(kl_sign):
    """KTO (arXiv 2402.01306, Eq. 7): desirable lambda_D (1 - sig(beta (r - z0))), undesirable
    lambda_U (1 - sig(beta (z0 - r))), z0 = max(0, mean(KL-pair log-ratios)); mean over all examples."""
    policy, ref = _unpaired(31)
    beta, wd, wu = 0.3, 1.3, 0.7
    kl_policy = rand(6, seed=33, lo=-8, hi=-4)
    kl_ref = kl_policy - kl_sign * rand(6, seed=34, lo=0.1, hi=1.0)
    z0 = max(0.0, sum(float(kl_policy[i] - kl_ref[i]) for i in range(6)) / 6)
    losses = []
    for i in range(6):
        lr = float(policy[i] - ref[i])
        if LABELS[i]:
            losses.append(wd * (1 - sig(beta * (lr - z0))))
        else:
            losses.append(wu * (1 - sig(beta * (z0 - lr))))
    loss, m = kto_loss(policy, ref, LABELS, beta=beta, desirable_weight=wd, undesirable_weight=wu,
                       policy_kl_logps=kl_policy, ref_kl_logps=kl_ref)
    close(loss, sum(losses) / 6)
    close(m["kl"], z0, 1e-6)
    chosen = [beta * float(policy[i] - ref[i]) for i in range(6) if LABELS[i]]
    rejected = [beta * float(policy[i] - ref[i]) for i in range(6) if not LABELS[i]]
    close(m["rewards/chosen"], sum(chosen) / len(chosen), 1e-6)
    close(m["rewards/margins"], sum(chosen) / len(chosen) - sum(rejected) / len(rejected), 1e-6)


def test_kto_apo_zero_unpaired():
    """APO-zero unpaired (arXiv 2408.06266): desirable 1 - sig(beta r), undesirable sig(beta r)."""
    policy, ref = _unpaired(35)
    beta = 0.4
    want = sum((1 - sig(beta * float(policy[i] - ref[i]))) if LABELS[i] else sig(beta * float(policy[i] - ref[i]))
               for i in range(6)) / 6
    close(kto_loss(policy, ref, LABELS, beta=beta, loss_type="apo_zero_unpaired")[0], want)


def test_bco_with_running_mean_and_udm_weights():
    """BCO (arXiv 2404.04656, Eq. 7): r = beta (log pi - log pi_ref), delta = running mean of every reward seen;
    desirable -log sig(r - delta), undesirable -w log sig(-(r - delta)); mean over the batch."""
    policy, ref = _unpaired(41)
    beta = 0.2
    earlier = torch.tensor([0.3, -0.2, 0.5, 0.9], dtype=F64)
    running = RunningMoments()
    running.update(earlier)
    prob = torch.tensor([0.2, 0.5, 0.97], dtype=F64)
    weights = udm_density_ratio_weights(prob, min_density_ratio=0.5, max_density_ratio=10.0)
    close(weights, [max(0.5, min(10.0, p / (1 - p + 1e-8))) for p in prob.tolist()])
    rewards = [beta * float(policy[i] - ref[i]) for i in range(6)]
    stream = earlier.tolist() + [r for i, r in enumerate(rewards) if LABELS[i]] + [
        r for i, r in enumerate(rewards) if not LABELS[i]]
    delta = sum(stream) / len(stream)
    chosen = [-logsig(r - delta) for i, r in enumerate(rewards) if LABELS[i]]
    rejected = [-float(w) * logsig(-(r - delta)) for w, r in zip(weights, [r for i, r in enumerate(rewards)
                                                                            if not LABELS[i]])]
    loss, m = bco_loss(policy, ref, LABELS, beta=beta, running=running, rejected_weights=weights)
    close(loss, (sum(chosen) + sum(rejected)) / 6, 1e-6)  # delta goes through a float32 mean, as in TRL
    close(m["delta"], delta, 1e-6)
    mean = sum(stream) / len(stream)
    close(running.std, math.sqrt(sum((x - mean) ** 2 for x in stream) / (len(stream) - 1)), 1e-5)


# ------------------------------------------------------------------------------------------- online pairs (XPO, Nash-MD)
@pytest.mark.parametrize("loss_type", ["sigmoid", "ipo"])
def test_xpo_dpo_on_the_ranked_pair_plus_exploration(loss_type):
    """XPO (arXiv 2405.21046, Alg. 1): rows 0..B-1 sampled from pi, B..2B-1 from pi_ref; h = log pi - log pi_ref;
    (w, l) the pair ordered by the reward; loss = mean_i [DPO(h_w - h_l) + alpha log pi(y'_i)]."""
    g = torch.Generator().manual_seed(51)
    policy = -0.5 - 8 * torch.rand(2 * B, generator=g, dtype=F64)
    ref = policy + torch.randn(2 * B, generator=g, dtype=F64)
    wins = torch.tensor([True, False, True])
    beta, alpha = 0.3, 0.02
    per_pair, kept = [], []
    for i in range(B):
        w, lo = (i, B + i) if wins[i] else (B + i, i)
        h_w, h_l = float(policy[w] - ref[w]), float(policy[lo] - ref[lo])
        dpo = -logsig(beta * (h_w - h_l)) if loss_type == "sigmoid" else (h_w - h_l - 1 / (2 * beta)) ** 2
        per_pair.append(dpo + alpha * float(policy[B + i]))
        kept.append((w, lo, h_w, h_l))
    loss, m = xpo_loss(policy, ref, wins, beta=beta, alpha=alpha, loss_type=loss_type)
    close(loss, sum(per_pair) / B)
    close(m["loss/xpo"], alpha * sum(float(policy[B + i]) for i in range(B)) / B, 1e-6)
    close(m["loss/dpo"], sum(p - alpha * float(policy[B + i]) for i, p in enumerate(per_pair)) / B, 1e-6)
    close(m["rewards/chosen"], sum(beta * k[2] for k in kept) / B, 1e-6)
    close(m["rewards/rejected"], sum(beta * k[3] for k in kept) / B, 1e-6)
    close(m["rewards/accuracies"], sum(k[2] > k[3] for k in kept) / B, 1e-6)
    close(m["objective/kl"], float((policy - ref).sum()) / (2 * B), 1e-6)
    close(m["objective/entropy"], -float(policy.sum()) / (2 * B), 1e-6)
    # TRL 1.13 logs the mean policy log-prob plus the mean reference log-prob of each side
    close(m["logps/chosen"], sum(float(policy[k[0]] + ref[k[0]]) for k in kept) / B, 1e-6)


def test_nash_md_reinforce_with_kl_and_its_gradient():
    """Nash-MD (arXiv 2312.00886), TRL's REINFORCE form on y ~ pi: P = P(y > y'), per sequence
    loss = beta sum_t sg(lp - ref) lp - (P - 1/2) sum_t lp; so d loss / d lp_t = (beta (lp_t - ref_t) - (P - 1/2)) / B."""
    lp, mask = rand(B, T, seed=52).requires_grad_(), lengths_mask(B)
    ref = rand(B, T, seed=53)
    prob = torch.tensor([0.8, 0.3, 0.55], dtype=F64)
    beta = 0.4
    per_seq = []
    for i in range(B):
        s_lp = seq_sum(lp.detach(), mask, i)
        kl = sum(float(lp.detach()[i, t] - ref[i, t]) * float(lp.detach()[i, t]) for t in range(T) if mask[i, t] > 0)
        per_seq.append(beta * kl - (float(prob[i]) - 0.5) * s_lp)
    loss, m = nash_md_loss(lp, ref, mask, prob, beta=beta)
    close(loss, sum(per_seq) / B)
    (grad,) = torch.autograd.grad(loss, lp)
    want = [[(beta * float(lp.detach()[i, t] - ref[i, t]) - (float(prob[i]) - 0.5)) * float(mask[i, t]) / B
             for t in range(T)] for i in range(B)]
    close(grad, want)
    ratios = [seq_sum(lp.detach(), mask, i) - seq_sum(ref, mask, i) for i in range(B)]
    close(m["loss/kl"], sum(ratios) / B, 1e-6)
    close(m["loss/score"], sum((float(prob[i]) - 0.5) * seq_sum(lp.detach(), mask, i) for i in range(B)) / B, 1e-6)
    close(m["logps/rejected"], sum(seq_sum(ref, mask, i) for i in range(B)) / B, 1e-6)
    close(m["rewards/accuracies"], sum(r > 0 for r in ratios) / B, 1e-6)
    close(m["rewards/probabilities"], float(prob.mean()), 1e-6)


# ------------------------------------------------------------------------------------------------- the GRPO family
def _rollouts(seed, rows=4):
    g = torch.Generator().manual_seed(seed)
    lp = -0.2 - 1.5 * torch.rand(rows, T, generator=g, dtype=F64)
    old = lp + 0.45 * torch.randn(rows, T, generator=g, dtype=F64)  # ratios on both sides of the clip range
    ref = lp + 0.3 * torch.randn(rows, T, generator=g, dtype=F64)
    adv = torch.tensor([1.3, -0.8, 0.4, -1.6][:rows], dtype=F64)
    return lp, old, ref, adv, lengths_mask(rows)


def grpo_oracle(loss_type, lp, old, ref, adv, mask, *, level="token", beta=0.0, eps_low=0.2, eps_high=0.28,
                delta=None, is_ratio=None, max_len=T, num_items=None, bias_kl=False, tau_pos=1.0, tau_neg=1.05,
                vespo=(2.0, 3.0, 3.0, 2.0), unmasked_per_token=False):
    """GRPO (arXiv 2402.03300, Eq. 3) and each variant's per-token term and reduction, token by token."""
    rows = lp.shape[0]
    per_token = [[0.0] * T for _ in range(rows)]
    for i in range(rows):
        a = float(adv[i])
        seq_log_ratio = sum(float(lp[i, t] - old[i, t]) for t in range(T) if mask[i, t] > 0)
        for t in range(T):
            log_ratio = float(lp[i, t] - old[i, t])
            r = math.exp(log_ratio if level == "token" else seq_log_ratio / seq_len(mask, i))
            logp = float(lp[i, t])
            if loss_type in ("grpo", "bnpo", "dr_grpo", "dapo", "luspo"):  # PPO clip (arXiv 1707.06347, Eq. 7)
                unclipped = r if delta is None else min(r, delta)
                loss = -min(unclipped * a, min(max(r, 1 - eps_low), 1 + eps_high) * a)
            elif loss_type == "cispo":  # value: -min(r, eps_max) * A * log p
                loss = -min(r, eps_high) * a * logp
            elif loss_type == "sapo":
                tau = tau_pos if a > 0 else tau_neg
                loss = -(4 / tau) * sig(tau * (r - 1)) * a
            else:  # vespo: phi(w) = exp(lambda) w^k exp(-lambda w), w the sequence ratio
                k, lam = (vespo[0], vespo[1]) if a >= 0 else (vespo[2], vespo[3])
                log_w = min(max(seq_log_ratio, math.log(1e-8)), 20.0)
                phi = math.exp(lam + k * log_w - lam * math.exp(log_w))
                loss = -phi * a * logp
            if is_ratio is not None and loss_type != "vespo":
                loss *= float(is_ratio[i, t])
            if beta:
                d = float(ref[i, t] - lp[i, t])
                kl = math.exp(d) - d - 1  # k3
                loss += beta * kl * (r if bias_kl else 1.0)
            per_token[i][t] = loss if unmasked_per_token else loss * float(mask[i, t])
    if unmasked_per_token:
        return per_token
    sums = [sum(row) for row in per_token]
    n_tok = float(mask.sum())
    if loss_type in ("grpo", "sapo"):
        return sum(sums[i] / seq_len(mask, i) for i in range(rows)) / rows
    if loss_type == "bnpo":
        return sum(sums) / n_tok
    if loss_type == "dr_grpo":
        return sum(sums) / (rows * max_len)
    if loss_type in ("dapo", "cispo", "vespo"):
        return sum(sums) / (n_tok if num_items is None else num_items)
    return sum(sums) / rows  # luspo


# SAPO's temperatures go through torch.where(A > 0, tau_pos, tau_neg), a float32 tensor (as in TRL)
SAPO_TOL = 1e-6


@pytest.mark.parametrize("loss_type", GRPO_LOSS_TYPES)
def test_grpo_every_loss_type(loss_type):
    lp, old, ref, adv, mask = _rollouts(51)
    for beta in (0.0, 0.05):
        loss, _ = grpo_loss(lp, mask, adv, old_per_token_logps=old, ref_per_token_logps=ref, loss_type=loss_type,
                            beta=beta, epsilon=0.2, epsilon_high=0.28, max_completion_length=T + 2)
        close(loss, grpo_oracle(loss_type, lp, old, ref, adv, mask, beta=beta, max_len=T + 2),
              SAPO_TOL if loss_type == "sapo" else 1e-10)


@pytest.mark.parametrize("loss_type", ["grpo", "bnpo", "dr_grpo", "dapo", "luspo"])
def test_grpo_sequence_level_delta_and_bias_corrected_kl(loss_type):
    """GSPO (arXiv 2507.18071): one ratio per sequence; INTELLECT-2's delta cap; DeepSeek-V3.2's KL * ratio."""
    lp, old, ref, adv, mask = _rollouts(52)
    kw = {"beta": 0.07, "delta": 1.3}
    loss, _ = grpo_loss(lp, mask, adv, old_per_token_logps=old, ref_per_token_logps=ref, loss_type=loss_type,
                        importance_sampling_level="sequence", use_bias_correction_kl=True, epsilon=0.15,
                        epsilon_high=0.25, **kw)
    close(loss, grpo_oracle(loss_type, lp, old, ref, adv, mask, level="sequence", bias_kl=True, eps_low=0.15,
                            eps_high=0.25, **kw))
    loss, _ = grpo_loss(lp, mask, adv, old_per_token_logps=old, ref_per_token_logps=ref, loss_type=loss_type,
                        epsilon=0.15, epsilon_high=0.25, **kw)
    close(loss, grpo_oracle(loss_type, lp, old, ref, adv, mask, eps_low=0.15, eps_high=0.25, **kw))


def test_grpo_vllm_is_ratio_options_and_normalisers():
    lp, old, ref, adv, mask = _rollouts(53)
    is_ratio = rand(4, T, seed=54, lo=0.5, hi=1.5)
    for loss_type in ("dapo", "vespo", "sapo"):
        loss, _ = grpo_loss(lp, mask, adv, old_per_token_logps=old, loss_type=loss_type, epsilon_high=0.28,
                            importance_sampling_ratio=
                            is_ratio if loss_type != "vespo" else None, sapo_temperature_pos=0.8,
                            sapo_temperature_neg=1.4, vespo_k_pos=1.5, vespo_lambda_pos=2.5, vespo_k_neg=2.5,
                            vespo_lambda_neg=1.5, num_items_in_batch=40)
        close(loss, grpo_oracle(loss_type, lp, old, ref, adv, mask, is_ratio=is_ratio if loss_type != "vespo"
                                else None, tau_pos=0.8, tau_neg=1.4, vespo=(1.5, 2.5, 2.5, 1.5), num_items=40),
              SAPO_TOL if loss_type == "sapo" else 1e-10)
    # TRL's own gradient-accumulation scaling: dapo divides by N / processes * accum / steps_per_generation,
    # the others divide their plain value by accum
    base = grpo_oracle("dapo", lp, old, ref, adv, mask, num_items=40)
    loss, _ = grpo_loss(lp, mask, adv, old_per_token_logps=old, epsilon_high=0.28, num_items_in_batch=40,
                        gradient_accumulation_steps=4,
                        num_processes=2, steps_per_generation=2)
    close(loss, base * 40 / (40 / 2 * 4 / 2))
    loss, _ = grpo_loss(lp, mask, adv, old_per_token_logps=old, epsilon_high=0.28, loss_type="grpo",
                        gradient_accumulation_steps=4)
    close(loss, grpo_oracle("grpo", lp, old, ref, adv, mask) / 4)


def test_grpo_entropy_bonus_and_off_policy_mask():
    lp, old, ref, adv, mask = _rollouts(55)
    ent = rand(4, T, seed=56, lo=0.0, hi=2.0)
    loss, m = grpo_loss(lp, mask, adv, old_per_token_logps=old, epsilon_high=0.28, loss_type="bnpo", entropies=ent,
                        entropy_coef=0.3)
    mean_ent = float((ent * mask).sum() / mask.sum())
    close(loss, grpo_oracle("bnpo", lp, old, ref, adv, mask) - 0.3 * mean_ent)
    close(m["entropy"], mean_ent)
    # DeepSeek-V3.2 off-policy mask: drop sequences with A < 0 whose mean (log pi_sampler - log pi) > threshold
    sampler = lp + torch.tensor([[0.5], [0.5], [0.0], [0.01]], dtype=F64)
    threshold = 0.1
    keep = []
    for i in range(4):
        kl = sum(float(sampler[i, t] - lp[i, t]) for t in range(T) if mask[i, t] > 0) / seq_len(mask, i)
        keep.append(1.0 if (adv[i] >= 0 or kl <= threshold) else 0.0)
    assert keep == [1.0, 0.0, 1.0, 1.0]
    loss, _ = grpo_loss(lp, mask, adv, old_per_token_logps=old, epsilon_high=0.28, loss_type="bnpo",
                        off_policy_mask_threshold=threshold, sampling_per_token_logps=sampler)
    seq_mask = torch.tensor(keep, dtype=F64).unsqueeze(1)
    # beta = 0, so a dropped sequence is one whose advantage is 0: it adds exactly 0 (and still counts in N)
    full = grpo_oracle("bnpo", lp, old, ref, adv * seq_mask.squeeze(1), mask)
    close(loss, full)


def test_grpo_clip_metrics():
    lp, old, _, adv, mask = _rollouts(64)
    el, eh = 0.2, 0.28
    _, m = grpo_loss(lp, mask, adv, old_per_token_logps=old, epsilon=el, epsilon_high=eh)
    low = [[float(math.exp(lp[i, t] - old[i, t]) < 1 - el and adv[i] < 0) for t in range(T)] for i in range(4)]
    high = [[float(math.exp(lp[i, t] - old[i, t]) > 1 + eh and adv[i] > 0) for t in range(T)] for i in range(4)]
    n = float(mask.sum())
    low_mean = sum(low[i][t] * float(mask[i, t]) for i in range(4) for t in range(T)) / n
    high_mean = sum(high[i][t] * float(mask[i, t]) for i in range(4) for t in range(T)) / n
    assert 0 < low_mean and 0 < high_mean  # both sides clip in this batch
    close(m["clip_ratio/low_mean"], low_mean)
    close(m["clip_ratio/high_mean"], high_mean)
    close(m["clip_ratio/region_mean"], low_mean + high_mean)
    _, m = grpo_loss(lp, mask, adv, old_per_token_logps=old, loss_type="cispo", epsilon_high=1.1)
    cis = sum(float(math.exp(lp[i, t] - old[i, t]) > 1.1 and adv[i] > 0) * float(mask[i, t])
              for i in range(4) for t in range(T)) / n
    close(m["cispo_clip_ratio"], cis)


def test_grpo_gradients_of_the_truncated_weights_are_detached():
    """CISPO / VESPO are REINFORCE with a stop-gradient weight: d loss / d logp = -weight * A / N."""
    lp, old, _, adv, mask = _rollouts(58)
    lp = lp.clone().requires_grad_()
    loss, _ = grpo_loss(lp, mask, adv, old_per_token_logps=old, loss_type="cispo", epsilon_high=1.2)
    (grad,) = torch.autograd.grad(loss, lp)
    weight = torch.exp(lp.detach() - old).clamp(max=1.2)
    close(grad, -weight * adv.unsqueeze(1) * mask / mask.sum())


# -------------------------------------------------------------------------------------------------------- RLOO
def test_rloo_advantages_leave_one_out_with_kl_and_normalisation():
    """RLOO (arXiv 2402.14740): A_i = r_i - mean_{j != i} r_j, rewards minus beta * sum_t (log pi_old - log pi_ref)."""
    lp, _, ref, _, mask = _rollouts(61)
    rewards = torch.tensor([1.0, 0.2, float("nan"), 0.7], dtype=F64)
    beta, k = 0.1, 2
    shaped = [float(rewards[i]) - beta * seq_sum(lp - ref, mask, i) for i in range(4)]
    want = []
    for i in range(4):
        group = [j for j in range(i - i % k, i - i % k + k) if j != i and not math.isnan(shaped[j])]
        want.append(0.0 if math.isnan(shaped[i]) else shaped[i] - sum(shaped[j] for j in group) / len(group)
                    if group else float("nan"))
    want = [0.0 if math.isnan(x) else x for x in want]
    adv, m = rloo_advantages(rewards, k, beta=beta, old_per_token_logps=lp, ref_per_token_logps=ref, mask=mask)
    close(adv[[0, 1, 2]], want[:3])
    close(m["kl"], float(((lp - ref) * mask).sum() / mask.sum()))
    rewards = torch.tensor([1.0, 0.2, 0.4, 0.7, 2.0, -1.0], dtype=F64)
    raw = [float(rewards[i]) - sum(float(rewards[j]) for j in range(i - i % 3, i - i % 3 + 3) if j != i) / 2
           for i in range(6)]
    mean = sum(raw) / 6
    std = math.sqrt(sum((x - mean) ** 2 for x in raw) / 5)
    adv, _ = rloo_advantages(rewards, 3, normalize_advantages=True)
    close(adv, [(x - mean) / (std + 1e-4) for x in raw])


def test_rloo_loss_sequence_clipped_surrogate():
    lp, old, _, adv, mask = _rollouts(62)
    lp = lp.clone().requires_grad_()
    old_seq = torch.tensor([seq_sum(old, mask, i) for i in range(4)], dtype=F64) * 0.97  # ratios off 1
    el, eh = 0.2, 0.3
    want, lows, highs = 0.0, 0, 0
    for i in range(4):
        r = math.exp(seq_sum(lp.detach(), mask, i) - float(old_seq[i]))
        a = float(adv[i])
        want += -min(r * a, min(max(r, 1 - el), 1 + eh) * a) / 4
        lows += r < 1 - el and a < 0
        highs += r > 1 + eh and a > 0
    loss, m = rloo_loss(lp, mask, adv, old_seq, epsilon=el, epsilon_high=eh)
    close(loss, want)
    close(m["clip_ratio/low_mean"], lows / 4)
    close(m["clip_ratio/high_mean"], highs / 4)


# ------------------------------------------------------------------------------------------------------- A*-PO
def test_a2po_optimal_value_and_regression():
    """A*-PO (arXiv 2505.20686): V* = beta1 log mean exp(r / beta1); loss = mean (beta2 log pi/pi_ref - (r - V*))^2."""
    rewards = torch.tensor([[1.0, 0.0, 0.5, 0.25], [0.0, 0.0, 2.0, 1.0]], dtype=F64)
    beta1 = 0.5
    v = optimal_value(rewards, beta1)
    close(v, [beta1 * math.log(sum(math.exp(x / beta1) for x in row) / 4) for row in rewards.tolist()])
    policy, ref = rand(3, seed=71, lo=-20, hi=-5), rand(3, seed=72, lo=-20, hi=-5)
    r, v_star, beta2 = torch.tensor([1.0, 0.0, 0.5], dtype=F64), torch.tensor([0.4, 0.1, 0.3], dtype=F64), 0.05
    loss, m = a2po_loss(policy, ref, r, v_star, beta2)
    terms = [beta2 * float(policy[i] - ref[i]) - float(r[i] - v_star[i]) for i in range(3)]
    close(loss, sum(x * x for x in terms) / 3)
    close(m["implicit_reward"], sum(beta2 * float(policy[i] - ref[i]) for i in range(3)) / 3)


# ------------------------------------------------------------------------------------------------------ reward
def test_reward_bradley_terry_margin_centering():
    """Bradley-Terry (InstructGPT arXiv 2203.02155, Eq. 1), Llama 2's margin (arXiv 2307.09288, Eq. 2), reward
    centering (Eisenstein et al., arXiv 2312.09244): -mean log sig(r_w - r_l - m) + c * mean((r_w + r_l)^2)."""
    rw, rl = rand(5, seed=81, lo=-2, hi=2), rand(5, seed=82, lo=-2, hi=2)
    margin, c = rand(5, seed=83, lo=0, hi=1), 0.05
    loss, m = reward_loss(rw, rl, margin=margin, center_rewards_coefficient=c)
    want = sum(-logsig(float(rw[i] - rl[i] - margin[i])) for i in range(5)) / 5
    want += c * sum(float(rw[i] + rl[i]) ** 2 for i in range(5)) / 5
    close(loss, want)
    close(reward_loss(rw, rl)[0], sum(-logsig(float(rw[i] - rl[i])) for i in range(5)) / 5)
    close(m["accuracy"], sum(float(rw[i] > rl[i]) for i in range(5)) / 5, 1e-6)
    close(m["margin"], sum(float(rw[i] - rl[i]) for i in range(5)) / 5, 1e-6)


# ------------------------------------------------------------------------------------------------- distillation
def _softmax(z):
    mx = max(z)
    e = [math.exp(x - mx) for x in z]
    s = sum(e)
    return [x / s for x in e]


def jsd_oracle(zs, zt, beta, temperature):
    """Generalised JSD of GKD (arXiv 2306.13649, Eq. 1): beta KL(p_t || m) + (1 - beta) KL(p_s || m),
    m = beta p_t + (1 - beta) p_s; beta 0 is forward KL(p_t || p_s), beta 1 reverse KL(p_s || p_t)."""
    ps = _softmax([x / temperature for x in zs])
    pt = _softmax([x / temperature for x in zt])
    def kl(p, q):
        return sum(a * math.log(a / b) for a, b in zip(p, q))
    if beta == 0:
        return kl(pt, ps)
    if beta == 1:
        return kl(ps, pt)
    mix = [beta * a + (1 - beta) * b for a, b in zip(pt, ps)]
    return beta * kl(pt, mix) + (1 - beta) * kl(ps, mix)


def _heads(seed, n=7, h=5, v=9):
    g = torch.Generator().manual_seed(seed)
    hs, ht = torch.randn(n, h, generator=g, dtype=F64), torch.randn(n, h, generator=g, dtype=F64)
    ws, wt = torch.randn(v, h, generator=g, dtype=F64) * 0.6, torch.randn(v, h, generator=g, dtype=F64) * 0.6
    labels = torch.randint(0, v, (n,), generator=g)
    labels[[1, 4]] = -100
    return hs, ht, ws, wt, labels


@pytest.mark.parametrize("beta", [0.0, 0.3, 1.0])
def test_generalized_jsd_and_distillation_loss(beta):
    hs, ht, ws, wt, labels = _heads(91)
    zs, zt, temp = hs @ ws.t(), ht @ wt.t(), 0.8
    valid = [i for i in range(len(labels)) if labels[i] != -100]
    want = sum(jsd_oracle(zs[i].tolist(), zt[i].tolist(), beta, temp) for i in valid) / len(valid)
    close(generalized_jsd_loss(zs, zt, labels, beta=beta, temperature=temp), want)
    mask = (labels != -100).to(F64)
    loss, _ = distillation_loss(hs, ws, ht, wt, mask, beta=beta, temperature=temp)
    close(loss, want, 1e-8)


def test_jsd_with_hard_loss_and_fused_linear_jsd():
    """Liger / TRL 1.13: w_soft * mean JSD(T) + w_hard * mean CE (temperature 1) over the labelled positions."""
    hs, ht, ws, wt, labels = _heads(92)
    zs, zt = hs @ ws.t(), ht @ wt.t()
    valid = [i for i in range(len(labels)) if labels[i] != -100]
    soft = sum(jsd_oracle(zs[i].tolist(), zt[i].tolist(), 0.4, 1.5) for i in valid) / len(valid)
    hard = sum(-math.log(_softmax(zs[i].tolist())[int(labels[i])]) for i in valid) / len(valid)
    loss, _ = jsd_with_hard_loss(hs, ws, ht, wt, labels, beta=0.4, temperature=1.5, weight_hard_loss=0.3,
                                 weight_soft_loss=0.9)
    close(loss, 0.9 * soft + 0.3 * hard, 1e-8)
    loss, soft_out, hard_out = FusedLinearJSDLoss(weight_hard_loss=0.3, weight_soft_loss=0.9, beta=0.4,
                                                  temperature=1.5, return_soft_hard_loss=True)(hs, ws, ht, wt, labels)
    close(loss, 0.9 * soft + 0.3 * hard, 1e-8)
    close(soft_out, soft, 1e-8)
    close(hard_out, hard, 1e-8)


# ------------------------------------------------------------------------------------ TRL 1.13 fused-linear adapters
def _token_logps(h, w, ids):
    """``[R, T]`` log-probs of ``ids`` under ``h @ w.T`` (full float64 logits: the oracle's own softmax)."""
    logits = h @ w.t()
    return torch.log_softmax(logits, -1).gather(-1, ids.clamp(min=0).unsqueeze(-1)).squeeze(-1)


def _adapter_batch(seed, rows):
    g = torch.Generator().manual_seed(seed)
    h = torch.randn(rows, T, 4, generator=g, dtype=F64)
    w, w_ref = torch.randn(11, 4, generator=g, dtype=F64) * 0.5, torch.randn(11, 4, generator=g, dtype=F64) * 0.5
    ids = torch.randint(0, 11, (rows, T), generator=g)
    mask = lengths_mask(rows)
    return h, w, w_ref, ids, mask


def test_fused_linear_dpo_and_kto_adapters():
    h, w, w_ref, ids, mask = _adapter_batch(101, 2 * B)
    target = ids.masked_fill(mask == 0, -100)
    lp, ref = _token_logps(h, w, target) * mask, _token_logps(h, w_ref, target) * mask
    beta, alpha = 0.2, 0.7
    loss, aux = FusedLinearDPOLoss(beta=beta, alpha=alpha, compute_nll_loss=True)(w, h, target, None, h, w_ref)
    close(loss, alpha * _chosen_nll(lp, mask) + dpo_oracle("sigmoid", lp, ref, mask, beta), 1e-9)
    close(aux[5], [beta * (seq_sum(lp, mask, i) - seq_sum(ref, mask, i)) for i in range(B)], 1e-9)
    labels = torch.tensor([True, False, True, False, False, True])
    kl = torch.tensor(0.3, dtype=F64)
    loss, _ = FusedLinearKTOLoss(beta=beta, use_ref_model=True)(h, w, target, None, labels, h, w_ref, None, kl)
    want = 0.0
    for i in range(6):
        lr = seq_sum(lp, mask, i) - seq_sum(ref, mask, i)
        want += (1 - sig(beta * (lr - 0.3) * (1.0 if labels[i] else -1.0))) / 6
    close(loss, want, 1e-9)


@pytest.mark.parametrize("loss_type,level", [("grpo", "token"), ("dr_grpo", "token"), ("luspo", "token"),
                                             ("dapo", "token"), ("sapo", "token"), ("bnpo", "sequence")])
def test_fused_linear_grpo_adapter(loss_type, level):
    """TRL 1.13's reductions: luspo = sum_it l_it * L_i / (B * T); the per-token term is the 1.16 one."""
    h, w, w_ref, ids, mask = _adapter_batch(102, 4)
    lp, ref_lp = _token_logps(h, w, ids), _token_logps(h, w_ref, ids)
    old = lp + 0.3 * torch.cos(torch.arange(4 * T, dtype=F64)).view(4, T)
    adv = torch.tensor([1.3, -0.8, 0.4, -1.6], dtype=F64)
    module = FusedLinearGRPOLoss(beta=0.05, loss_type=loss_type, epsilon_low=0.2, epsilon_high=0.28,
                                 max_completion_length=T + 1, importance_sampling_level=level)
    loss, metrics = module(h, w, ids, mask, adv, ref_per_token_logps=ref_lp, old_per_token_logps=old)
    if loss_type == "luspo":  # 1.13 sums the padded positions too: (l * L_i).sum() / (B * T)
        per_tok = grpo_oracle("luspo", lp, old, ref_lp, adv, mask, beta=0.05, unmasked_per_token=True)
        want = sum(per_tok[i][t] * seq_len(mask, i) for i in range(4) for t in range(T)) / (4 * T)
    else:
        want = grpo_oracle(loss_type, lp, old, ref_lp, adv, mask, beta=0.05, max_len=T + 1, level=level)
    close(loss, want, 1e-6)  # the 1.13 adapter takes old / ref log-probs in float32, as 1.13 did
    assert len(metrics) == 2
