"""``reference_impl`` against the real TRL 1.16 wheel (the installed ``trl``): same inputs, same outputs.

Oracles, named in each test: ``trl.kernels.ChunkedLogProbFunction`` / ``ChunkedDivergenceFunction`` and
``trl.trainer.distillation_trainer._chunked_divergence_loss`` (called directly), and the loss code of
``DPOTrainer._compute_loss``, ``KTOTrainer._compute_loss``, ``GRPOTrainer._compute_loss``,
``RLOOTrainer._compute_loss``, ``RewardTrainer.compute_loss`` and the experimental ``CPOTrainer.cpo_loss`` /
``ORPOTrainer.odds_ratio_loss``. The trainer methods are TRL's own functions run unbound on a namespace that carries
the config values they read and a stand-in for the model that returns fixed per-token tensors -- what the trainer's
fused LM head would hand the loss -- so the comparison covers exactly the loss math, not model plumbing.
"""

from __future__ import annotations

import collections
import types

import pytest
import torch

trl = pytest.importorskip("trl")
if not trl.__version__.startswith("1.16"):
    pytest.skip(f"these oracles are TRL 1.16's (installed: {trl.__version__})", allow_module_level=True)

from trl.kernels import ChunkedLogProbFunction  # noqa: E402
from trl.kernels.chunked_divergence import ChunkedDivergenceFunction  # noqa: E402
from trl.trainer.distillation_trainer import _chunked_divergence_loss  # noqa: E402
from trl.trainer.dpo_trainer import DPOTrainer  # noqa: E402
from trl.trainer.grpo_trainer import GRPOTrainer  # noqa: E402
from trl.trainer.kto_trainer import KTOTrainer  # noqa: E402
from trl.trainer.reward_trainer import RewardTrainer  # noqa: E402
from trl.trainer.rloo_trainer import RLOOTrainer  # noqa: E402

from reference_impl.chunking import chunked_divergence, chunked_logprobs  # noqa: E402
from reference_impl.losses import (  # noqa: E402
    DPO_LOSS_TYPES,
    GRPO_LOSS_TYPES,
    cpo_loss,
    distillation_loss,
    dpo_loss,
    grpo_loss,
    kto_loss,
    orpo_loss,
    reward_loss,
    rloo_loss,
    sequence_logps,
)

F64 = torch.float64


class _Accelerator:
    """Single-process stand-in: every collective is the identity."""

    device = torch.device("cpu")
    num_processes = 1
    process_index = 0
    sync_gradients = True

    def gather(self, x):
        return x

    gather_for_metrics = gather

    def reduce(self, x, reduction="sum"):
        return x


def _trainer_self(**attrs):
    ns = types.SimpleNamespace(
        accelerator=_Accelerator(), _metrics={"train": collections.defaultdict(list)}, aux_loss_enabled=False,
        model=types.SimpleNamespace(training=True), _total_train_tokens=0, _tp_size=1,
    )
    for k, v in attrs.items():
        setattr(ns, k, v)
    return ns


def _metrics_close(ours: dict, theirs: dict, keys, atol=1e-6):
    for k in keys:
        got = float(ours[k])
        want = theirs[k][-1] if isinstance(theirs[k], list) else float(theirs[k])
        assert got == pytest.approx(want, abs=atol, rel=1e-6), k


# ------------------------------------------------------------------------------------------------------------------
# engine vs trl.kernels


@pytest.mark.parametrize("softcap", [None, 6.0])
@pytest.mark.parametrize("bias", [False, True])
def test_logprobs_vs_trl_kernels_chunked_logprob(softcap, bias):
    """Oracle: TRL 1.16 ``trl.kernels.ChunkedLogProbFunction`` (torch fallback on CPU), fp32 inputs."""
    g = torch.Generator().manual_seed(0)
    n, h, v = 45, 24, 1037
    hidden = torch.randn(n, h, generator=g, requires_grad=True)
    weight = (torch.randn(v, h, generator=g) * 0.3).requires_grad_()
    b = (torch.randn(v, generator=g) * 0.1).requires_grad_() if bias else None
    targets = torch.randint(0, v, (n,), generator=g)
    kw = dict(temperature=0.8, logit_scale=1.25, softcap=softcap)
    names = ("logp", "entropy", "logsumsq", "mean_logit", "argmax_correct")
    ours = chunked_logprobs(hidden, weight, targets, bias=b, chunk=3, outputs=names, **kw)
    theirs = ChunkedLogProbFunction.apply(
        hidden, weight, b, targets, 0.8, 256, softcap, 1.25, ("entropy", "log_sum_sq_probs", "mean_logits", "is_top1")
    )
    for name, t in zip(names, theirs, strict=True):
        torch.testing.assert_close(ours[name], t.float(), atol=2e-5, rtol=1e-5, msg=name)
    g1, g2 = torch.randn(n, generator=g), torch.randn(n, generator=g)
    params = [hidden, weight] + ([b] if bias else [])
    got = torch.autograd.grad((ours["logp"] * g1 + ours["entropy"] * g2).sum(), params)
    want = torch.autograd.grad((theirs[0] * g1 + theirs[1] * g2).sum(), params)
    for a, w in zip(got, want, strict=True):
        torch.testing.assert_close(a, w, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("beta", [0.0, 1.0, 0.5])
def test_divergence_vs_trl_kernels_chunked_divergence(beta):
    """Oracle: TRL 1.16 ``trl.kernels.chunked_divergence.ChunkedDivergenceFunction``."""
    g = torch.Generator().manual_seed(1)
    n, hs_dim, ht_dim, v = 33, 16, 20, 777
    hs = torch.randn(n, hs_dim, generator=g, requires_grad=True)
    ws = (torch.randn(v, hs_dim, generator=g) * 0.3).requires_grad_()
    ht = torch.randn(n, ht_dim, generator=g)
    wt = torch.randn(v, ht_dim, generator=g) * 0.3
    ours = chunked_divergence(
        hs, ws, ht, wt, beta=beta, temperature=1.1, student_softcap=5.0, teacher_logit_scale=0.9, chunk=2,
        outputs=("divergence", "entropy"),
    )
    div, ent = ChunkedDivergenceFunction.apply(hs, ws, None, ht, wt, None, beta, 1.1, 1.0, 5.0, 0.9, None)
    torch.testing.assert_close(ours["divergence"], div, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(ours["entropy"], ent, atol=1e-5, rtol=1e-5)
    gw = torch.randn(n, generator=g)
    got = torch.autograd.grad((ours["divergence"] * gw).sum(), [hs, ws])
    want = torch.autograd.grad((div * gw).sum(), [hs, ws])
    for a, w in zip(got, want, strict=True):
        torch.testing.assert_close(a, w, atol=1e-5, rtol=1e-4)


def test_distillation_loss_vs_trl_chunked_divergence_loss():
    """Oracle: TRL 1.16 ``trl.trainer.distillation_trainer._chunked_divergence_loss`` (loss and entropy sum)."""
    g = torch.Generator().manual_seed(2)
    b, t, h, v = 3, 7, 16, 501
    hs = torch.randn(b, t, h, generator=g, requires_grad=True)
    ws = torch.randn(v, h, generator=g) * 0.3
    ht = torch.randn(b, t, h, generator=g)
    wt = torch.randn(v, h, generator=g) * 0.3
    mask = (torch.rand(b, t, generator=g) > 0.3).long()
    for beta in (0.0, 0.5, 1.0):
        ours, metrics = distillation_loss(hs, ws, ht, wt, mask, beta=beta, temperature=0.9)
        theirs, ent_sum, n_valid = _chunked_divergence_loss(hs, ht, ws, wt, mask, beta, temperature=0.9)
        torch.testing.assert_close(ours, theirs, atol=1e-6, rtol=1e-5)
        assert float(metrics["entropy"]) == pytest.approx(float(ent_sum / n_valid), rel=1e-5)
        torch.testing.assert_close(
            torch.autograd.grad(ours, hs)[0], torch.autograd.grad(theirs, hs)[0], atol=1e-6, rtol=1e-4
        )


# ------------------------------------------------------------------------------------------------------------------
# DPO


def _dpo_batch(b=4, t=9, seed=0):
    g = torch.Generator().manual_seed(seed)
    completion_mask = torch.zeros(2 * b, t + 1, dtype=torch.long)
    for i in range(2 * b):  # column 0 is prompt; completions of different lengths
        completion_mask[i, 1 + int(torch.randint(0, 3, (1,), generator=g)) : 1 + t - int(i % 3)] = 1
    shift_mask = completion_mask[:, 1:]
    per_token = (-torch.rand(2 * b, t, generator=g, dtype=F64) * 3) * shift_mask
    per_token.requires_grad_()
    ref_per_token = (-torch.rand(2 * b, t, generator=g, dtype=F64) * 3) * shift_mask
    stats = {
        "entropy": torch.rand(2 * b, t, generator=g, dtype=F64) * 4,
        "mean_logits": torch.randn(2 * b, t, generator=g, dtype=F64),
        "is_top1": torch.rand(2 * b, t, generator=g) > 0.5,
        "log_sum_sq_probs": -torch.rand(2 * b, t, generator=g, dtype=F64) * 2,
    }
    return completion_mask, per_token, ref_per_token, stats


def _trl_dpo(loss_type, weights, completion_mask, per_token, ref_seq, stats, **cfg):
    outputs = types.SimpleNamespace(log_probs=per_token, **stats)
    inputs = {
        "input_ids": torch.ones_like(completion_mask),
        "attention_mask": torch.ones_like(completion_mask),
        "completion_mask": completion_mask,
        "ref_chosen_logps": ref_seq.chunk(2)[0],
        "ref_rejected_logps": ref_seq.chunk(2)[1],
    }
    ns = _trainer_self(
        precompute_ref_logps=True, loss_types=loss_type, loss_weights=weights,
        beta=cfg.get("beta", 0.1), label_smoothing=cfg.get("label_smoothing", 0.0),
        f_divergence_type=cfg.get("f_divergence_type", "reverse_kl"),
        f_alpha_divergence_coef=cfg.get("f_alpha_divergence_coef", 1.0), ld_alpha=cfg.get("ld_alpha"),
        use_weighting=cfg.get("use_weighting", False), args=types.SimpleNamespace(discopop_tau=0.05),
    )
    loss = DPOTrainer._compute_loss(ns, lambda **kw: outputs, inputs, return_outputs=False)
    return loss, ns._metrics["train"]


DPO_METRICS = ["rewards/chosen", "rewards/rejected", "rewards/accuracies", "rewards/margins", "logps/chosen",
               "logps/rejected", "entropy", "logits/chosen", "logits/rejected", "mean_token_accuracy"]


@pytest.mark.parametrize("loss_type", DPO_LOSS_TYPES)
def test_dpo_every_loss_type_vs_trl(loss_type):
    """Oracle: TRL 1.16 ``DPOTrainer._compute_loss`` (loss, gradient w.r.t. the per-token log-probs, metrics)."""
    cm, per_token, ref_tok, stats = _dpo_batch()
    shift = cm[:, 1:]
    ref_seq = sequence_logps(ref_tok, shift)
    smoothing = 0.1 if loss_type in ("exo_pair", "robust", "aot", "aot_unpaired") else 0.0
    theirs, tm = _trl_dpo([loss_type], [1.0], cm, per_token, ref_seq, stats, label_smoothing=smoothing, beta=0.3)
    ours, om = dpo_loss(
        per_token, shift, ref_seq, beta=0.3, loss_type=loss_type, label_smoothing=smoothing,
        entropy=stats["entropy"], mean_logits=stats["mean_logits"], is_top1=stats["is_top1"],
    )
    # exo_pair: TRL builds its epsilon as an fp32 tensor, so its log(eps) carries fp32 rounding
    tol = 1e-7 if loss_type == "exo_pair" else 1e-10
    torch.testing.assert_close(ours, theirs.to(ours.dtype), atol=tol, rtol=tol)
    # TRL sums the per-token values unmasked (they are 0 off the completion); compare where the mask is on
    torch.testing.assert_close(
        torch.autograd.grad(ours, per_token)[0] * shift, torch.autograd.grad(theirs, per_token)[0] * shift
    )
    _metrics_close(om, tm, DPO_METRICS)


@pytest.mark.parametrize(
    "cfg",
    [
        {"f_divergence_type": "forward_kl"},
        {"f_divergence_type": "js_divergence"},
        {"f_divergence_type": "alpha_divergence", "f_alpha_divergence_coef": 0.5},
        {"ld_alpha": 0.3},
        {"use_weighting": True},
        {"loss_type": ["sigmoid", "bco_pair", "sft"], "loss_weights": [0.8, 0.2, 1.0]},
    ],
    ids=["forward_kl", "js", "alpha", "ld_alpha", "wpo", "mpo_combo"],
)
def test_dpo_options_vs_trl(cfg):
    """Oracle: TRL 1.16 ``DPOTrainer._compute_loss`` with f-divergences, LD-DPO, WPO and combined losses."""
    cm, per_token, ref_tok, stats = _dpo_batch(seed=3)
    shift = cm[:, 1:]
    cfg = dict(cfg)
    if cfg.get("f_divergence_type") == "alpha_divergence":
        # TRL's alpha-divergence clamp table has no float64 entry (KeyError); compare in float32
        per_token = per_token.detach().float().requires_grad_()
        ref_tok = ref_tok.float()
        stats = {k: v.float() if v.is_floating_point() else v for k, v in stats.items()}
    loss_type = cfg.pop("loss_type", ["sigmoid"])
    weights = cfg.pop("loss_weights", [1.0] * len(loss_type))
    ref_seq = sequence_logps(ref_tok, shift, ld_alpha=cfg.get("ld_alpha"))
    theirs, tm = _trl_dpo(loss_type, weights, cm, per_token, ref_seq, stats, **cfg)
    ours, om = dpo_loss(
        per_token, shift, ref_seq, loss_type=loss_type, loss_weights=weights, log_sum_sq_probs=stats["log_sum_sq_probs"],
        entropy=stats["entropy"], **cfg,
    )
    tol = 1e-10 if per_token.dtype == F64 else 1e-6
    torch.testing.assert_close(ours, theirs.to(ours.dtype), atol=tol, rtol=tol)
    torch.testing.assert_close(
        torch.autograd.grad(ours, per_token)[0] * shift, torch.autograd.grad(theirs, per_token)[0] * shift
    )
    _metrics_close(om, tm, DPO_METRICS[:7], atol=1e-5)


# ------------------------------------------------------------------------------------------------------------------
# KTO


@pytest.mark.parametrize("loss_type", ["kto", "apo_zero_unpaired"])
def test_kto_vs_trl(loss_type):
    """Oracle: TRL 1.16 ``KTOTrainer._compute_loss`` (precomputed reference log-probs, KL term on)."""
    g = torch.Generator().manual_seed(4)
    b, t = 6, 8
    labels = torch.tensor([True, False, True, True, False, False])
    completion_mask = torch.zeros(b, t + 1, dtype=torch.long)
    completion_mask[:, 2:] = 1
    per_token = (-torch.rand(b, t, generator=g, dtype=F64) * 2 * completion_mask[:, 1:]).requires_grad_()
    ref_logps = -torch.rand(b, generator=g, dtype=F64) * 10
    kl_logps = -torch.rand(b, generator=g, dtype=F64) * 10
    ref_kl_logps = kl_logps - torch.rand(b, generator=g, dtype=F64)
    outputs = types.SimpleNamespace(
        log_probs=per_token, entropy=torch.rand(b, t, dtype=F64), mean_logits=torch.randn(b, t, dtype=F64)
    )
    batch = {"label": labels, "input_ids": torch.ones_like(completion_mask), "completion_mask": completion_mask,
             "attention_mask": torch.ones_like(completion_mask), "ref_logps": ref_logps, "ref_KL_logps": ref_kl_logps}
    ns = _trainer_self(
        loss_type=loss_type, beta=0.2, desirable_weight=1.3, undesirable_weight=0.7, precompute_ref_logps=True,
        calculate_KL=True, _compute_kl_logps=lambda model, batch: kl_logps,
    )
    theirs = KTOTrainer._compute_loss(ns, lambda **kw: outputs, batch, return_outputs=False)
    tm = ns._metrics["train"]
    ours, om = kto_loss(
        per_token.sum(-1), ref_logps, labels, beta=0.2, loss_type=loss_type, desirable_weight=1.3,
        undesirable_weight=0.7, policy_kl_logps=kl_logps, ref_kl_logps=ref_kl_logps,
    )
    torch.testing.assert_close(ours, theirs.to(ours.dtype))
    cmask = completion_mask[:, 1:]
    torch.testing.assert_close(
        torch.autograd.grad(ours, per_token)[0] * cmask, torch.autograd.grad(theirs, per_token)[0] * cmask
    )
    _metrics_close(om, tm, ["kl", "rewards/chosen", "rewards/rejected", "rewards/margins", "logps/chosen",
                            "logps/rejected"])


# ------------------------------------------------------------------------------------------------------------------
# GRPO / RLOO


def _grpo_case(seed=5, b=6, t=10):
    g = torch.Generator().manual_seed(seed)
    mask = torch.ones(b, t, dtype=torch.long)
    for i in range(b):
        mask[i, t - i :] = 0
    logps = (-torch.rand(b, t, generator=g, dtype=F64) * 2).requires_grad_()
    old = logps.detach() + torch.randn(b, t, generator=g, dtype=F64) * 0.3
    ref = logps.detach() + torch.randn(b, t, generator=g, dtype=F64) * 0.2
    adv = torch.randn(b, generator=g, dtype=F64)
    entropies = torch.rand(b, t, generator=g, dtype=F64) * 3
    is_ratio = torch.rand(b, t, generator=g, dtype=F64) + 0.5
    return mask, logps, old, ref, adv, entropies, is_ratio


GRPO_CASES = [
    {"loss_type": lt} for lt in GRPO_LOSS_TYPES
] + [
    {"loss_type": "dapo", "beta": 0.04, "use_bias_correction_kl": True, "vllm": True},
    {"loss_type": "grpo", "importance_sampling_level": "sequence", "beta": 0.1, "delta": 1.5},
    {"loss_type": "luspo", "importance_sampling_level": "sequence"},
    {"loss_type": "bnpo", "epsilon_high": 0.28, "vllm": True, "off_policy": 0.05},
    {"loss_type": "vespo", "vllm": True},
    {"loss_type": "cispo", "epsilon_high": 0.8, "beta": 0.02},
    {"loss_type": "dr_grpo", "accum": 4},
    {"loss_type": "dapo", "accum": 2, "steps_per_generation": 4},
    {"loss_type": "sapo", "entropy_coef": 0.01},
]


@pytest.mark.parametrize("case", GRPO_CASES, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_grpo_vs_trl(case):
    """Oracle: TRL 1.16 ``GRPOTrainer._compute_loss`` (loss, gradient, every logged metric)."""
    mask, logps, old, ref, adv, entropies, is_ratio = _grpo_case()
    c = dict(case)
    vllm = c.pop("vllm", False)
    accum = c.pop("accum", 1)
    spg = c.pop("steps_per_generation", 1)
    opm = c.pop("off_policy", None)
    coef = c.pop("entropy_coef", 0.0)
    loss_type = c.pop("loss_type")
    beta = c.get("beta", 0.0)
    eps_high = c.get("epsilon_high", 0.2)
    num_items = mask.sum() * spg  # the generation batch spans steps_per_generation micro-batches
    args = types.SimpleNamespace(
        use_bias_correction_kl=c.get("use_bias_correction_kl", False), delta=c.get("delta"),
        sapo_temperature_pos=1.0, sapo_temperature_neg=1.05, vespo_k_pos=2.0, vespo_lambda_pos=3.0,
        vespo_k_neg=3.0, vespo_lambda_neg=2.0, steps_per_generation=spg,
    )
    ns = _trainer_self(
        args=args, loss_type=loss_type, beta=beta, epsilon_low=0.2, epsilon_high=eps_high,
        importance_sampling_level=c.get("importance_sampling_level", "token"), top_entropy_quantile=1.0,
        off_policy_mask_threshold=opm, use_vllm=vllm, vllm_importance_sampling_correction=vllm,
        current_gradient_accumulation_steps=accum, max_completion_length=12, _entropy_bonus_enabled=coef != 0,
        use_adaptive_entropy=False, entropy_coef=coef,
        get_off_policy_mask=GRPOTrainer.get_off_policy_mask, get_gamma_weights=GRPOTrainer.get_gamma_weights,
        _get_per_token_logps_and_entropies=lambda *a, **k: (logps, entropies, None),
    )
    inputs = {
        "prompt_ids": torch.ones(6, 2, dtype=torch.long), "prompt_mask": torch.ones(6, 2, dtype=torch.long),
        "completion_ids": torch.ones_like(mask), "completion_mask": mask, "advantages": adv,
        "old_per_token_logps": old, "ref_per_token_logps": ref, "num_items_in_batch": num_items,
    }
    if vllm:
        inputs["importance_sampling_ratio"] = is_ratio
        inputs["sampling_per_token_logps"] = old - 0.05
    theirs = GRPOTrainer._compute_loss(ns, None, inputs)
    tm = ns._metrics["train"]
    ours, om = grpo_loss(
        logps, mask, adv, old_per_token_logps=old, ref_per_token_logps=ref, loss_type=loss_type, epsilon=0.2,
        max_completion_length=12, num_items_in_batch=num_items, importance_sampling_ratio=is_ratio if vllm else None,
        off_policy_mask_threshold=opm, sampling_per_token_logps=(old - 0.05) if vllm else None, entropies=entropies,
        entropy_coef=coef, gradient_accumulation_steps=accum, steps_per_generation=spg, **c,
    )
    torch.testing.assert_close(ours, theirs.to(ours.dtype), atol=1e-12, rtol=1e-10)
    torch.testing.assert_close(torch.autograd.grad(ours, logps)[0], torch.autograd.grad(theirs, logps)[0])
    assert set(tm) - {"entropy_coef"} <= set(om), set(tm) - set(om)
    _metrics_close(om, tm, [k for k in tm if k != "entropy_coef"], atol=1e-9)


def test_rloo_loss_vs_trl():
    """Oracle: TRL 1.16 ``RLOOTrainer._compute_loss``."""
    mask, logps, old, _, adv, entropies, _ = _grpo_case(seed=6)
    old_logps = (old * mask).sum(1)
    ns = _trainer_self(
        epsilon_low=0.2, epsilon_high=0.3, _get_per_token_logps_and_entropies=lambda *a, **k: (logps, entropies, None)
    )
    inputs = {"prompt_ids": torch.ones(6, 2, dtype=torch.long), "prompt_mask": torch.ones(6, 2, dtype=torch.long),
              "completion_ids": torch.ones_like(mask), "completion_mask": mask, "advantages": adv,
              "old_logps": old_logps}
    theirs = RLOOTrainer._compute_loss(ns, None, inputs)
    ours, om = rloo_loss(logps, mask, adv, old_logps, epsilon=0.2, epsilon_high=0.3, entropies=entropies)
    torch.testing.assert_close(ours, theirs.to(ours.dtype))
    torch.testing.assert_close(torch.autograd.grad(ours, logps)[0], torch.autograd.grad(theirs, logps)[0])
    _metrics_close(om, ns._metrics["train"], list(ns._metrics["train"]))


# ------------------------------------------------------------------------------------------------------------------
# reward, CPO, ORPO


@pytest.mark.parametrize("margin", [False, True])
@pytest.mark.parametrize("center", [None, 0.01])
def test_reward_loss_vs_trl(margin, center):
    """Oracle: TRL 1.16 ``RewardTrainer.compute_loss``."""
    g = torch.Generator().manual_seed(7)
    scores = torch.randn(10, 1, generator=g, requires_grad=True)
    inputs = {"input_ids": torch.ones(10, 3, dtype=torch.long), "attention_mask": torch.ones(10, 3, dtype=torch.long)}
    if margin:
        inputs["margin"] = torch.rand(5, generator=g)
    ns = _trainer_self(args=types.SimpleNamespace(center_rewards_coefficient=center))
    theirs = RewardTrainer.compute_loss(ns, lambda **kw: types.SimpleNamespace(logits=scores), dict(inputs))
    chosen, rejected = scores.squeeze(-1).chunk(2)
    ours, om = reward_loss(chosen, rejected, margin=inputs.get("margin"), center_rewards_coefficient=center)
    torch.testing.assert_close(ours, theirs)
    _metrics_close(om, ns._metrics["train"], ["min_reward", "mean_reward", "max_reward", "accuracy", "margin"])


@pytest.mark.parametrize("loss_type,alpha", [("sigmoid", 0.0), ("hinge", 0.0), ("ipo", 0.0), ("simpo", 0.0),
                                             ("sigmoid", 0.3)])
def test_cpo_loss_vs_trl_experimental(loss_type, alpha):
    """Oracle: TRL 1.16 ``trl.experimental.cpo.CPOTrainer.cpo_loss`` on per-sequence log-probs."""
    from trl.experimental.cpo.cpo_trainer import CPOTrainer

    g = torch.Generator().manual_seed(8)
    seq = (-torch.rand(8, generator=g, dtype=F64) * 3).requires_grad_()
    ns = _trainer_self(beta=0.2, loss_type=loss_type, label_smoothing=0.1, simpo_gamma=0.4, alpha=alpha)
    losses, chosen_r, rejected_r = CPOTrainer.cpo_loss(ns, *seq.chunk(2))
    # per-sequence values as [2B, 1] "per-token" inputs with a full mask: sums and averages are the values themselves
    ours, om = cpo_loss(seq.unsqueeze(1), torch.ones(8, 1), beta=0.2, loss_type=loss_type, label_smoothing=0.1,
                        simpo_gamma=0.4, cpo_alpha=0.0, alpha=alpha)
    torch.testing.assert_close(ours, losses.mean())
    assert float(om["rewards/chosen"]) == pytest.approx(float(chosen_r.mean()))
    assert float(om["rewards/margins"]) == pytest.approx(float((chosen_r - rejected_r).mean()))


def test_orpo_loss_vs_trl_experimental():
    """Oracle: TRL 1.16 ``trl.experimental.orpo.ORPOTrainer.odds_ratio_loss`` (the NLL term added as the trainer
    does: ``loss = nll - mean(losses)``)."""
    from trl.experimental.orpo.orpo_trainer import ORPOTrainer

    g = torch.Generator().manual_seed(9)
    seq = (-torch.rand(8, generator=g, dtype=F64) * 2 - 0.01).requires_grad_()
    ns = _trainer_self(beta=0.15)
    losses, chosen_r, rejected_r, ratio, log_odds = ORPOTrainer.odds_ratio_loss(ns, *seq.chunk(2))
    ours, om = orpo_loss(seq.unsqueeze(1), torch.ones(8, 1), beta=0.15)
    nll = -seq.chunk(2)[0].mean()
    torch.testing.assert_close(ours, nll - losses.mean())
    assert float(om["log_odds_ratio"]) == pytest.approx(float(ratio))
    assert float(om["log_odds_chosen"]) == pytest.approx(float(log_odds))
