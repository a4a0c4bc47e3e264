"""The ``trl.losses`` adapters against TRL 1.13's own ``trl.losses`` (and BCO, XPO, Nash-MD against 1.13's own).

Runs where TRL 1.13 is the installed ``trl`` (the tox ``floor`` env); skipped elsewhere, since TRL 1.16 has no
``trl.losses``. Oracles: TRL 1.13 ``trl.losses.FusedLinearDPOLoss``, ``FusedLinearKTOLoss``, ``FusedLinearGRPOLoss``,
``FusedLinearJSDLoss`` (``compiled=False``), and ``trl.experimental.bco.BCOTrainer.bco_loss``,
``trl.experimental.xpo.XPOTrainer._compute_losses`` / ``_log_statistics`` and the same two of ``NashMDTrainer``, run
unbound on a namespace carrying their config. fp32 inputs: 1.13 computes the JSD soft loss on logits in the input dtype, so only
fp32 is comparable to the fp32-softmax adapters.
"""

from __future__ import annotations

import types

import pytest
import torch

trl = pytest.importorskip("trl")
pytestmark = [
    pytest.mark.trl,
    pytest.mark.skipif(not trl.__version__.startswith("1.13"), reason=f"needs TRL 1.13 (installed {trl.__version__})"),
]

import reference_impl.losses as ours  # noqa: E402


def _head(seed, b=4, t=7, h=16, v=211):
    g = torch.Generator().manual_seed(seed)
    hidden = torch.randn(b, t, h, generator=g)
    weight = torch.randn(v, h, generator=g) * 0.3
    bias = torch.randn(v, generator=g) * 0.1
    targets = torch.randint(0, v, (b, t), generator=g)
    targets[:, :2] = -100
    targets[1, -2:] = -100
    return hidden, weight, bias, targets


def _grads(fn, *tensors):
    tensors = [x.detach().clone().requires_grad_() for x in tensors]
    out = fn(*tensors)
    loss = out[0] if isinstance(out, tuple) else out
    return out, torch.autograd.grad(loss, tensors)


@pytest.mark.parametrize("loss_type", ["sigmoid", "hinge", "nca_pair", "robust", "bco_pair", "apo_zero", "discopop"])
@pytest.mark.parametrize("average", [False, True])
def test_dpo_adapter_vs_trl113(loss_type, average):
    from trl.losses import FusedLinearDPOLoss

    hidden, weight, bias, targets = _head(0)
    ref_w = weight + 0.01
    kw = dict(beta=0.2, compute_nll_loss=True, average_log_prob=average, loss_type=loss_type, label_smoothing=0.1)
    theirs, tg = _grads(
        lambda w, x, b: FusedLinearDPOLoss(compiled=False, **kw)(w, x, targets, b, x.detach(), ref_w, b),
        weight, hidden, bias,
    )
    mine, mg = _grads(
        lambda w, x, b: ours.FusedLinearDPOLoss(**kw)(w, x, targets, b, x.detach(), ref_w, b), weight, hidden, bias
    )
    torch.testing.assert_close(mine[0], theirs[0], atol=1e-5, rtol=1e-5)
    for a, e in zip(mine[1], theirs[1], strict=True):
        torch.testing.assert_close(a, e, atol=1e-4, rtol=1e-4)
    for a, e in zip(mg, tg, strict=True):
        torch.testing.assert_close(a, e, atol=1e-5, rtol=1e-4)


def test_kto_adapter_vs_trl113():
    from trl.losses import FusedLinearKTOLoss

    hidden, weight, bias, targets = _head(1)
    labels = torch.tensor([True, False, True, False])
    kl = torch.tensor(0.07)
    args = lambda x, w, b: (x, w, targets, b, labels, x.detach(), w.detach() + 0.01, b.detach(), kl)  # noqa: E731
    theirs, tg = _grads(lambda x, w, b: FusedLinearKTOLoss(compiled=False, use_ref_model=True)(*args(x, w, b)),
                        hidden, weight, bias)
    mine, mg = _grads(lambda x, w, b: ours.FusedLinearKTOLoss(use_ref_model=True)(*args(x, w, b)), hidden, weight, bias)
    torch.testing.assert_close(mine[0], theirs[0], atol=1e-5, rtol=1e-5)
    for a, e in zip(mine[1], theirs[1], strict=True):
        torch.testing.assert_close(a, e, atol=1e-3, rtol=1e-4)
    for a, e in zip(mg, tg, strict=True):
        torch.testing.assert_close(a, e, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("loss_type", ["grpo", "bnpo", "dr_grpo", "dapo", "cispo", "sapo", "luspo", "vespo"])
def test_grpo_adapter_vs_trl113(loss_type):
    from trl.losses import FusedLinearGRPOLoss

    hidden, weight, bias, targets = _head(2)
    ids = targets.clamp(min=0)
    mask = (targets != -100).long()
    adv = torch.tensor([0.5, -1.0, 1.5, -0.2])
    g = torch.Generator().manual_seed(3)
    old = -torch.rand(4, 7, generator=g) * 6
    ref = -torch.rand(4, 7, generator=g) * 6
    kw = dict(beta=0.04, loss_type=loss_type, max_completion_length=7, temperature=0.9, epsilon_high=0.28)

    def call(cls, **extra):
        return lambda x, w, b: cls(**kw, **extra)(x, w, ids, mask, adv, b, ref, old)

    theirs, tg = _grads(call(FusedLinearGRPOLoss, compiled=False), hidden, weight, bias)
    mine, mg = _grads(call(ours.FusedLinearGRPOLoss), hidden, weight, bias)
    torch.testing.assert_close(mine[0], theirs[0], atol=1e-5, rtol=1e-5)
    for a, e in zip(mine[1], theirs[1], strict=True):
        torch.testing.assert_close(a, e, atol=1e-5, rtol=1e-5)
    for a, e in zip(mg, tg, strict=True):
        torch.testing.assert_close(a, e, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("beta", [0.0, 0.5, 1.0])
def test_jsd_adapter_vs_trl113(beta):
    from trl.losses import FusedLinearJSDLoss

    hidden, weight, bias, targets = _head(4)
    x, t = hidden.reshape(-1, 16), targets.reshape(-1)
    tw = weight.flip(0)
    kw = dict(beta=beta, temperature=1.2, weight_hard_loss=0.3, weight_soft_loss=0.7, return_soft_hard_loss=True)
    theirs, tg = _grads(lambda a, w: FusedLinearJSDLoss(compiled=False, **kw)(a, w, x, tw, t), x, weight)
    mine, mg = _grads(lambda a, w: ours.FusedLinearJSDLoss(**kw)(a, w, x, tw, t), x, weight)
    for a, e in zip(mine, theirs, strict=True):
        torch.testing.assert_close(a, e, atol=1e-5, rtol=1e-5)
    for a, e in zip(mg, tg, strict=True):
        torch.testing.assert_close(a, e, atol=1e-5, rtol=1e-4)


def test_bco_loss_vs_trl113_experimental():
    """Oracle: TRL 1.13 ``trl.experimental.bco.BCOTrainer.bco_loss`` (running baseline, UDM weights)."""
    from trl.experimental.bco.bco_trainer import BCOTrainer, RunningMoments

    class _Acc:
        use_distributed = False

    g = torch.Generator().manual_seed(5)
    pc, pr, rc, rr = (-torch.rand(n, generator=g) * 10 for n in (3, 4, 3, 4))
    running = RunningMoments(accelerator=_Acc())
    prob = torch.tensor([0.2, 0.5, 0.7, 0.9])
    ns = types.SimpleNamespace(
        beta=0.1, running=running, match_underlying_distribution=True,
        _get_udm_weight=lambda emb: ours.udm_density_ratio_weights(prob),
    )
    losses, chosen_r, rejected_r, delta = BCOTrainer.bco_loss(ns, pc, pr, rc, rr, None, None)
    mine_running = ours.RunningMoments()
    labels = torch.tensor([True] * 3 + [False] * 4)
    loss, metrics = ours.bco_loss(torch.cat([pc, pr]), torch.cat([rc, rr]), labels, beta=0.1, running=mine_running,
                                  rejected_weights=ours.udm_density_ratio_weights(prob))
    torch.testing.assert_close(loss, losses.mean())
    assert float(metrics["delta"]) == pytest.approx(float(delta))
    assert mine_running.mean == pytest.approx(running.mean) and mine_running.var == pytest.approx(running.var)


@pytest.mark.parametrize("options", [
    dict(), dict(step_separator=" ; ;"), dict(train_on_last_step_only=True), dict(max_completion_length=5),
    dict(max_length=9), dict(train_on_last_step_only=True, is_eval=True),
])
def test_prm_tokenize_row_vs_trl113(options):
    """Oracle: TRL 1.13 ``trl.experimental.prm.PRMTrainer.tokenize_row`` on the rows of the reference PRM tests."""
    from trl.experimental.prm import PRMTrainer

    from reference_impl import PRMTrainer as Ours

    from . import _trainer_helpers as H
    from .test_prm import step_dataset

    kwargs = {**dict(step_separator="\n", max_length=None, max_completion_length=None, train_on_last_step_only=False,
                     is_eval=False), **options}
    tokenizer = H.tokenizer("right")
    for row in step_dataset(6):
        assert Ours.tokenize_row(row, tokenizer, **kwargs) == PRMTrainer.tokenize_row(row, tokenizer, **kwargs)


@pytest.mark.slow
def test_prm_first_step_vs_trl113(tmp_path):
    """Oracle: TRL 1.13's ``PRMTrainer`` itself: same tiny model, data and config -> the same first-step loss and
    gradient norm, and the same evaluation loss and accuracy. Without gradient accumulation only: with it, TRL's
    loss is the sum of the micro-batch means (transformers' token-classification heads drop `num_items_in_batch`
    while the Trainer skips its division), ours the mean over the step (see ``reference_impl/trainers/prm.py``)."""
    from trl.experimental.prm import PRMConfig, PRMTrainer

    import reference_impl as ri

    from . import _trainer_helpers as H
    from .test_prm import step_dataset, token_classifier

    results = []
    for trainer_cls, config_cls in ((PRMTrainer, PRMConfig), (ri.PRMTrainer, ri.PRMConfig)):
        kw = H.config_kwargs(tmp_path / trainer_cls.__module__, per_device_train_batch_size=4)
        trainer = trainer_cls(token_classifier(), args=config_cls(**kw), train_dataset=step_dataset(),
                              eval_dataset=step_dataset(5), processing_class=H.tokenizer("right"))
        results.append((H.first_log(trainer), trainer.evaluate()))
    (theirs, their_eval), (mine, my_eval) = results
    for key in ("loss", "grad_norm"):
        H.assert_close(mine[key], theirs[key], tol=1e-5, what=key)
    H.assert_close(my_eval["eval_loss"], their_eval["eval_loss"], tol=1e-5, what="eval_loss")
    assert my_eval["eval_accuracy"] == their_eval["eval_accuracy"]


def _masked_token_logps(seed, rows=4, t=6):
    """Per-token log-probs with right padding zeroed, as TRL 1.13's XPO / Nash-MD `_compute_logprobs` return them."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.tensor([t, t - 2, t - 1, 3][:rows])
    mask = (torch.arange(t)[None] < lengths[:, None]).float()
    return tuple(-torch.rand(rows, t, generator=g) * 3 * mask for _ in range(4)), mask


@pytest.mark.parametrize("loss_type", ["sigmoid", "ipo"])
def test_xpo_loss_vs_trl113_experimental(loss_type):
    """Oracle: TRL 1.13 ``XPOTrainer._compute_losses`` and ``_log_statistics``, run unbound."""
    from collections import defaultdict

    from trl.experimental.xpo.xpo_trainer import XPOTrainer

    (mlm, mlr, rlr, rlm), _ = _masked_token_logps(6)
    chosen = torch.tensor([True, False, False, True])
    ns = types.SimpleNamespace(beta=0.2, alpha=0.05, args=types.SimpleNamespace(loss_type=loss_type),
                               stats=defaultdict(list), processing_class=types.SimpleNamespace(eos_token_id=1),
                               accelerator=types.SimpleNamespace(gather_for_metrics=lambda x: x))
    loss, dpo_losses, xpo_losses = XPOTrainer._compute_losses(ns, mlm, mlr, rlr, rlm, chosen)
    ids = {"input_ids": torch.zeros(4, 8, dtype=torch.long)}
    scores = torch.zeros(4)
    XPOTrainer._log_statistics(ns, ids, ids, mlm, mlr, rlr, rlm, chosen, dpo_losses, xpo_losses, 2, scores, scores)
    mine, metrics = ours.xpo_loss(torch.cat([mlm.sum(1), mlr.sum(1)]), torch.cat([rlm.sum(1), rlr.sum(1)]), chosen,
                                  beta=0.2, alpha=0.05, loss_type=loss_type)
    torch.testing.assert_close(mine, loss)
    for name in ("loss/dpo", "loss/xpo", "objective/kl", "objective/entropy", "rewards/chosen", "rewards/rejected",
                 "rewards/accuracies", "rewards/margins", "logps/chosen", "logps/rejected"):
        assert float(metrics[name]) == pytest.approx(ns.stats[name][0], rel=1e-5, abs=1e-6), name


def test_nash_md_loss_vs_trl113_experimental():
    """Oracle: TRL 1.13 ``NashMDTrainer._compute_losses`` (value and gradient) and ``_log_statistics``, unbound."""
    from collections import defaultdict

    from trl.experimental.nash_md.nash_md_trainer import NashMDTrainer

    (mlm, rlm, _, _), mask = _masked_token_logps(7)
    probability = torch.tensor([0.9, 0.2, 0.5, 0.65])
    ns = types.SimpleNamespace(beta=0.3, mixture_coef=0.5, stats=defaultdict(list),
                               processing_class=types.SimpleNamespace(eos_token_id=1),
                               accelerator=types.SimpleNamespace(gather_for_metrics=lambda x: x))
    theirs_lp = mlm.clone().requires_grad_()
    loss, score, kl = NashMDTrainer._compute_losses(ns, theirs_lp, rlm, probability)
    (their_grad,) = torch.autograd.grad(loss, theirs_lp)
    ids = {"input_ids": torch.zeros(4, 8, dtype=torch.long)}
    NashMDTrainer._log_statistics(ns, ids, ids, mlm, rlm, probability, score.detach(), kl, 2, torch.zeros(4),
                                  torch.zeros(4))
    my_lp = mlm.clone().requires_grad_()
    mine, metrics = ours.nash_md_loss(my_lp, rlm, mask, probability, beta=0.3)
    (my_grad,) = torch.autograd.grad(mine, my_lp)
    torch.testing.assert_close(mine, loss)
    torch.testing.assert_close(my_grad, their_grad * mask)  # TRL zeroes padding with masked_fill upstream
    for name in ("loss/score", "loss/kl", "logps/chosen", "logps/rejected", "rewards/probabilities",
                 "objective/entropy", "rewards/margins", "rewards/accuracies"):
        assert float(metrics[name]) == pytest.approx(ns.stats[name][0], rel=1e-5, abs=1e-6), name
