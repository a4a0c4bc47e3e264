"""The 3-GEMM scalar-loss path (``reference_impl.scalar_loss``) against float64 full logits and the engine.

Oracle: ``_naive.naive_stats`` (full float64 logits, ordinary autograd) with the SFT loss written out
(``sum(w * -logp [* p]) / num_items``); and the per-token engine (``chunked_logprobs``, itself tested against the same
oracle) for fp32 inputs. The torch fold runs here (``REFERENCE_IMPL_FOLD=torch``); the Triton fold's scalar-path case
is in ``test_triton_fold.py``.
"""

from __future__ import annotations

import pytest
import torch

from reference_impl.scalar_loss import (
    _TokenPlan,
    chunked_scalar_loss,
    scalar_path_applies,
)

from ._naive import naive_stats

F64 = torch.float64


@pytest.fixture(autouse=True)
def _torch_fold(monkeypatch):
    monkeypatch.setenv("REFERENCE_IMPL_FOLD", "torch")


def _inputs(n, h, v, *, dtype=F64, seed=0, bias=True):
    g = torch.Generator().manual_seed(seed)
    hidden = torch.randn(n, h, generator=g, dtype=F64).to(dtype).requires_grad_()
    weight = (torch.randn(v, h, generator=g, dtype=F64) * 0.5).to(dtype).requires_grad_()
    b = (torch.randn(v, generator=g, dtype=F64) * 0.1).to(dtype).requires_grad_() if bias else None
    targets = torch.randint(0, v, (n,), generator=g)
    targets[::5] = -100
    return hidden, weight, b, targets


def _naive_loss(hidden, weight, bias, targets, loss_type, weights=None, num_items=None, **kw):
    ref = naive_stats(hidden, weight, targets, bias=bias, **kw)
    logp = ref["logp"]
    per_token = -logp * (logp.detach().exp() if loss_type == "dft" else 1.0)
    if weights is not None:
        per_token = per_token * weights
    denom = (targets != -100).sum() if num_items is None else num_items
    return per_token.sum() / max(float(denom), 1.0), ref


def _grads(loss, params):
    return torch.autograd.grad(loss, [p for p in params if p is not None and p.requires_grad])


@pytest.mark.parametrize("loss_type", ["nll", "dft"])
@pytest.mark.parametrize(
    "n,h,v,chunk,kw",
    [
        (23, 6, 71, 2, {"softcap": 3.0, "logit_scale": 1.2, "temperature": 0.8}),  # several token and vocab blocks
        (16, 5, 40, 1000, {}),  # one token block
    ],
)
def test_matches_fp64_naive(loss_type, n, h, v, chunk, kw):
    hidden, weight, bias, targets = _inputs(n, h, v)
    g = torch.Generator().manual_seed(9)
    weights = torch.rand(n, generator=g, dtype=F64)
    plan = _TokenPlan((targets != -100).sum().item(), h, weight, chunk)
    assert (plan.blocks > 1) == (chunk == 2)
    loss, stats = chunked_scalar_loss(hidden, weight, targets, bias=bias, loss_type=loss_type, token_weights=weights,
                                      num_items_in_batch=40, chunk=chunk, path="scalar",
                                      outputs=("logp", "entropy", "argmax_correct"), **kw)
    want, ref = _naive_loss(hidden, weight, bias, targets, loss_type, weights, 40, **kw)
    assert loss.dtype == F64 and loss.dim() == 0
    torch.testing.assert_close(loss, want, atol=1e-12, rtol=1e-12)
    for name in ("logp", "entropy", "argmax_correct"):
        assert not stats[name].requires_grad
        torch.testing.assert_close(stats[name], ref[name].detach(), atol=1e-10, rtol=1e-10, msg=name)
    for a, b in zip(_grads(loss * 3.0, (hidden, weight, bias)), _grads(want * 3.0, (hidden, weight, bias)),
                    strict=True):
        torch.testing.assert_close(a, b, atol=1e-10, rtol=1e-10)


@pytest.mark.parametrize("needs", ["hidden", "weight", "bias"])
def test_only_the_inputs_that_require_grad(needs):
    hidden, weight, bias, targets = _inputs(12, 4, 30)
    for name, t in (("hidden", hidden), ("weight", weight), ("bias", bias)):
        t.requires_grad_(name == needs)
    loss, _ = chunked_scalar_loss(hidden, weight, targets, bias=bias, chunk=2, path="scalar")
    want, _ = _naive_loss(hidden, weight, bias, targets, "nll")
    (got,) = _grads(loss, (hidden, weight, bias))
    (exp,) = _grads(want, (hidden, weight, bias))
    torch.testing.assert_close(got, exp, atol=1e-10, rtol=1e-10)


def test_fp32_matches_the_engine():
    """fp32, several token blocks: the 3-GEMM path equals the per-token engine (4 GEMMs) to fp32 rounding."""
    hidden, weight, bias, targets = _inputs(40, 16, 300, dtype=torch.float32, seed=1)
    results = {}
    for path in ("scalar", "engine"):
        loss, stats = chunked_scalar_loss(hidden, weight, targets, bias=bias, loss_type="dft", chunk=8, path=path,
                                          outputs=("entropy",))
        results[path] = (loss, stats["entropy"], *_grads(loss, (hidden, weight, bias)))
    for a, b in zip(results["scalar"], results["engine"], strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("mode", ["upcast", "autocast"])
def test_converted_weight_blocks_match_the_engine(mode, monkeypatch):
    """The two-pass variant (several vocabulary blocks: each weight block is converted, never the weight): bf16 weights
    upcast to fp32 GEMMs (``REFERENCE_IMPL_CPU_GEMM=fp32``), and fp32 master weights under bf16 autocast (fp32
    ``dW`` summed over 3 token blocks), against the per-token engine. Both GEMM choices are pinned: the detection
    (``cpu_has_native_gemm``) would make autocast's bf16 GEMMs fp32 on a CPU without AVX512-BF16/AMX, where the
    fp32 weight then needs no conversion and the case under test does not arise."""
    monkeypatch.setenv("REFERENCE_IMPL_CPU_GEMM", "fp32" if mode == "upcast" else "native")
    dtype = torch.bfloat16 if mode == "upcast" else torch.float32
    hidden, weight, bias, targets = _inputs(30, 16, 700, dtype=dtype, seed=3)
    chunk = 64 if mode == "upcast" else 4
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=mode == "autocast"):
        plan = _TokenPlan(24, 16, weight, chunk)
    assert plan.converts and plan.vocab_block < 700 and (plan.blocks == 1) == (mode == "upcast")
    results = {}
    for path in ("scalar", "engine"):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=mode == "autocast"):
            loss, stats = chunked_scalar_loss(hidden, weight, targets, bias=bias, chunk=chunk, path=path,
                                              outputs=("entropy", "argmax_correct"))
        results[path] = (loss, *stats.values(), *_grads(loss, (hidden, weight, bias)))
    for a, b in zip(results["scalar"], results["engine"], strict=True):
        assert a.dtype == b.dtype
        torch.testing.assert_close(a.float(), b.float(), atol=1e-2, rtol=1e-2)


def test_auto_path_choice():
    """auto: fp32 weights and single-block bf16 take the 3-GEMM path; bf16 with several token blocks (dW would be
    rounded once per block) and a frozen head take the engine."""
    h = torch.zeros(64, 8)
    w32 = torch.zeros(100, 8, requires_grad=True)
    wbf = torch.zeros(100, 8, dtype=torch.bfloat16, requires_grad=True)
    assert scalar_path_applies(64, h, w32, chunk=1)
    assert scalar_path_applies(64, h, wbf, chunk=256)
    assert not scalar_path_applies(64, h, wbf, chunk=1)
    assert not scalar_path_applies(64, h, torch.zeros(100, 8), chunk=256)


def test_bf16_auto_matches_naive_bf16_closeness():
    """bf16 through ``path="auto"`` (both choices) is as close to fp64 as the naive bf16 path."""
    from ._naive import rel_err

    hidden, weight, _, targets = _inputs(24, 16, 200, dtype=torch.bfloat16, seed=2, bias=False)
    hd, wd = hidden.detach().double().requires_grad_(), weight.detach().double().requires_grad_()
    exact, _ = _naive_loss(hd, wd, None, targets, "nll")
    ex = torch.autograd.grad(exact, (hd, wd))
    naive, _ = _naive_loss(hidden, weight, None, targets, "nll", compute=torch.bfloat16, stat_dtype=torch.float32)
    nv = _grads(naive, (hidden, weight))
    for chunk in (8, 256):  # engine (several token blocks), 3-GEMM (one block)
        assert scalar_path_applies(24, hidden, weight, chunk) == (chunk == 256)
        loss, _ = chunked_scalar_loss(hidden, weight, targets, chunk=chunk)
        got = _grads(loss, (hidden, weight))
        assert abs(loss.item() - exact.item()) <= 1.1 * abs(naive.item() - exact.item()) + 1e-6
        for a, b, e in zip(got, nv, ex, strict=True):
            assert rel_err(a, e) <= 1.1 * rel_err(b, e) + 1e-6


def test_no_grad_computes_no_gradients():
    hidden, weight, bias, targets = _inputs(10, 4, 20)
    want, _ = _naive_loss(hidden, weight, bias, targets, "nll")
    with torch.no_grad():
        loss, _ = chunked_scalar_loss(hidden, weight, targets, bias=bias, chunk=2, path="scalar")
    assert not loss.requires_grad
    torch.testing.assert_close(loss, want.detach(), atol=1e-12, rtol=1e-12)


def test_second_backward_is_refused():
    hidden, weight, bias, targets = _inputs(10, 4, 20)
    loss, _ = chunked_scalar_loss(hidden, weight, targets, bias=bias, path="scalar")
    loss.backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="retain_graph"):
        loss.backward()


def test_all_ignored_and_shapes():
    hidden, weight, bias, targets = _inputs(6, 4, 20)
    targets = torch.full((2, 3), -100)
    loss, stats = chunked_scalar_loss(hidden.reshape(2, 3, 4), weight, targets, bias=bias, path="scalar",
                                      outputs=("entropy",))
    loss.backward()
    assert loss.item() == 0.0 and stats["entropy"].shape == (2, 3)
    assert hidden.grad.abs().sum() == 0 and weight.grad.abs().sum() == 0
    hidden, weight, bias, targets = _inputs(6, 4, 20)
    loss, stats = chunked_scalar_loss(hidden.reshape(2, 3, 4), weight, targets.reshape(2, 3), path="scalar",
                                      outputs=("logp",))
    want, ref = _naive_loss(hidden, weight, None, targets, "nll")
    torch.testing.assert_close(loss, want, atol=1e-12, rtol=1e-12)
    torch.testing.assert_close(stats["logp"].reshape(-1), ref["logp"].detach(), atol=1e-10, rtol=1e-10)
    with pytest.raises(ValueError, match="loss_type"):
        chunked_scalar_loss(hidden, weight, targets, loss_type="chunked_nll")


@pytest.mark.parametrize("loss_type", ["nll", "dft"])
def test_sft_trainer_takes_the_scalar_path(loss_type, tmp_path, monkeypatch):
    """`SFTTrainer.compute_loss` through the 3-GEMM path equals its per-token path (`_scalar_loss = False`: engine
    log-probs, then `losses.sft`) in loss, every parameter gradient and the logged entropy/accuracy; and the 3-GEMM
    Function really runs (the tiny model's head is fp32 and trainable)."""
    from reference_impl import SFTConfig, SFTTrainer, scalar_loss

    from . import _trainer_helpers as H

    calls = []
    apply = scalar_loss._ScalarLossFunction.apply
    monkeypatch.setattr(scalar_loss._ScalarLossFunction, "apply", lambda *a: calls.append(1) or apply(*a))
    trainer = SFTTrainer(H.model(), args=SFTConfig(**H.config_kwargs(tmp_path, loss_type=loss_type)),
                         train_dataset=H.prompt_completion_dataset(), processing_class=H.tokenizer("right"))
    batch = next(iter(trainer.get_train_dataloader()))
    trainer.model.train()
    results = {}
    for scalar in (True, False):
        monkeypatch.setattr(trainer, "_scalar_loss", scalar)
        trainer.model.zero_grad(set_to_none=True)
        loss = trainer.compute_loss(trainer.model, batch)
        loss.backward()
        grads = {n: p.grad.clone() for n, p in trainer.model.named_parameters() if p.grad is not None}
        logged = {k: trainer._metrics["train"][k][-1] for k in ("entropy", "mean_token_accuracy")}
        results[scalar] = (loss.detach(), grads, logged)
    assert len(calls) == 1
    (loss_s, grads_s, log_s), (loss_e, grads_e, log_e) = results[True], results[False]
    torch.testing.assert_close(loss_s, loss_e, atol=1e-6, rtol=1e-6)
    assert grads_s.keys() == grads_e.keys()
    assert any(n.endswith(("lm_head.weight", "embed_tokens.weight")) for n in grads_s)  # the head (maybe tied)
    for name in grads_s:
        torch.testing.assert_close(grads_s[name], grads_e[name], atol=1e-6, rtol=1e-5, msg=name)
    assert log_s == pytest.approx(log_e, abs=1e-6)
