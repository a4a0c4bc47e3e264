"""The chunked engine against a naive full-logits reference (oracle: ``tests/reference_impl/_naive.py``).

float64 inputs: the engine must equal the float64 reference to rounding (1e-10). bf16 inputs: compared with the
naive bf16 path (bf16 logits, fp32 softmax -- what a model's ``lm_head`` + ``cross_entropy`` does) and both against
an fp64 computation on the same bf16-valued inputs: the engine must be at least as close as naive bf16 (10% slack
for rounding noise). Shapes include token counts not divisible by the tile, vocabularies not divisible by any block,
ignored positions and all-ignored batches.
"""

from __future__ import annotations

import pytest
import torch

from reference_impl.chunking import LOGPROB_OUTPUTS, chunked_divergence, chunked_logprobs
from reference_impl.losses.distillation import generalized_jsd_loss

from ._naive import naive_stats, rel_err

F64 = torch.float64


def _inputs(n, h, v, *, dtype=F64, bias=True, masked_every=4, seed=0, wscale=0.5):
    g = torch.Generator().manual_seed(seed)
    hidden = torch.randn(n, h, generator=g, dtype=F64).to(dtype)
    weight = (torch.randn(v, h, generator=g, dtype=F64) * wscale).to(dtype)
    b = (torch.randn(v, generator=g, dtype=F64) * 0.1).to(dtype) if bias else None
    targets = torch.randint(0, v, (n,), generator=g)
    if masked_every:
        targets[::masked_every] = -100
    return hidden, weight, b, targets


CONFIGS = [
    # n, h, v, chunk, kwargs
    (37, 16, 101, 3, {}),  # many token and vocab blocks, nothing divides evenly
    (64, 8, 50, 1000, {}),  # everything in one tile (the kept-tile backward)
    (29, 12, 257, 2, {"softcap": 5.0, "logit_scale": 1.3, "temperature": 0.7}),
    (20, 8, 3001, 2, {"temperature": 1.5}),  # wide vocabulary, tokens split across blocks
]


@pytest.mark.parametrize("n,h,v,chunk,kw", CONFIGS)
@pytest.mark.parametrize("head", ["trainable", "frozen"])
@pytest.mark.parametrize("backward", ["auto", "recompute"])
def test_matches_naive_fp64(n, h, v, chunk, kw, head, backward):
    hidden, weight, bias, targets = _inputs(n, h, v)
    hidden.requires_grad_()
    if head == "trainable":
        weight.requires_grad_()
        bias.requires_grad_()
    out = chunked_logprobs(
        hidden, weight, targets, bias=bias, chunk=chunk, outputs=LOGPROB_OUTPUTS, backward=backward, **kw
    )
    ref = naive_stats(hidden, weight, targets, bias=bias, **kw)
    for name in LOGPROB_OUTPUTS:
        assert out[name].dtype == F64
        torch.testing.assert_close(out[name], ref[name], atol=1e-10, rtol=1e-10, msg=name)
    g1, g2 = torch.randn(n, dtype=F64), torch.randn(n, dtype=F64)
    params = [hidden] + ([weight, bias] if head == "trainable" else [])
    # logp and entropy both carry gradients (GRPO's entropy bonus)
    got = torch.autograd.grad((out["logp"] * g1).sum() + (out["entropy"] * g2).sum(), params)
    want = torch.autograd.grad((ref["logp"] * g1).sum() + (ref["entropy"] * g2).sum(), params)
    for a, b in zip(got, want, strict=True):
        torch.testing.assert_close(a, b, atol=1e-10, rtol=1e-10)


@pytest.mark.parametrize("backward", ["auto", "forward", "recompute"])
def test_frozen_head_logp_only_gradient(backward):
    """The grad-in-forward path (frozen head, only ``logp`` differentiated) against the naive gradient."""
    hidden, weight, bias, targets = _inputs(41, 10, 333, masked_every=3)
    hidden.requires_grad_()
    out = chunked_logprobs(hidden, weight, targets, bias=bias, chunk=2, softcap=4.0, backward=backward)
    ref = naive_stats(hidden, weight, targets, bias=bias, softcap=4.0)
    g = torch.randn(41, dtype=F64)
    (got,) = torch.autograd.grad((out["logp"] * g).sum(), hidden)
    (want,) = torch.autograd.grad((ref["logp"] * g).sum(), hidden)
    torch.testing.assert_close(got, want, atol=1e-10, rtol=1e-10)
    assert weight.grad is None


def test_leading_shape_and_all_ignored_rows():
    hidden, weight, bias, targets = _inputs(24, 8, 77, masked_every=0)
    hidden = hidden.view(4, 6, 8).requires_grad_()
    targets = targets.view(4, 6)
    targets[1] = -100  # a fully masked row
    weight.requires_grad_()
    out = chunked_logprobs(hidden, weight, targets, bias=bias, chunk=1, outputs=("logp", "entropy"))
    assert out["logp"].shape == (4, 6)
    assert torch.all(out["logp"][1] == 0) and torch.all(out["entropy"][1] == 0)
    out["logp"].sum().backward()
    assert torch.all(hidden.grad[1] == 0)
    ref = naive_stats(hidden.detach().view(24, 8), weight.detach(), targets.view(-1), bias=bias)
    torch.testing.assert_close(out["logp"].view(-1), ref["logp"], atol=1e-10, rtol=0)


def test_every_position_ignored_gives_zero_gradients():
    hidden, weight, _, targets = _inputs(10, 8, 30)
    hidden.requires_grad_()
    weight.requires_grad_()
    out = chunked_logprobs(hidden, weight, torch.full_like(targets, -100), outputs=("logp", "entropy", "logsumsq"))
    assert all(torch.all(v == 0) for v in out.values())
    out["logp"].sum().backward()
    assert torch.all(hidden.grad == 0) and torch.all(weight.grad == 0)


def test_retain_graph_second_backward_recomputes():
    """The single-tile backward overwrites the kept logits; a second backward must still be right."""
    hidden, weight, _, targets = _inputs(16, 8, 40)
    hidden.requires_grad_()
    weight.requires_grad_()
    loss = chunked_logprobs(hidden, weight, targets)["logp"].sum()
    g1 = torch.autograd.grad(loss, [hidden, weight], retain_graph=True)
    g2 = torch.autograd.grad(loss, [hidden, weight])
    for a, b in zip(g1, g2, strict=True):
        torch.testing.assert_close(a, b, atol=1e-12, rtol=0)


@pytest.mark.parametrize("bias", [False, True])
def test_gradcheck_logprobs(bias):
    hidden, weight, b, targets = _inputs(7, 5, 13, bias=bias, masked_every=3)
    hidden.requires_grad_()
    weight.requires_grad_()
    inputs = (hidden, weight) + ((b.requires_grad_(),) if bias else ())

    def fn(h, w, *maybe_b):
        out = chunked_logprobs(
            h, w, targets, bias=maybe_b[0] if maybe_b else None, chunk=1, softcap=3.0, temperature=0.9,
            outputs=("logp", "entropy"),
        )
        return out["logp"], out["entropy"]

    assert torch.autograd.gradcheck(fn, inputs, eps=1e-6, atol=1e-7, fast_mode=True)


def test_gradcheck_frozen_head_grad_in_forward():
    hidden, weight, b, targets = _inputs(6, 4, 11, masked_every=0)
    hidden.requires_grad_()
    assert torch.autograd.gradcheck(
        lambda h: chunked_logprobs(h, weight, targets, bias=b, chunk=1, backward="forward")["logp"], (hidden,)
    )


@pytest.mark.parametrize("beta", [0.0, 1.0, 0.4])
def test_gradcheck_divergence(beta):
    hs, ws, bs, _ = _inputs(6, 4, 9, seed=1)
    ht, wt, _, _ = _inputs(6, 5, 9, seed=2, bias=False)
    mask = torch.tensor([1, 1, 0, 1, 1, 1])
    inputs = (hs.requires_grad_(), ws.requires_grad_(), bs.requires_grad_())

    def fn(h, w, b):
        return chunked_divergence(h, w, ht, wt, beta=beta, mask=mask, student_bias=b, chunk=1, temperature=1.3)[
            "divergence"
        ]

    assert torch.autograd.gradcheck(fn, inputs, eps=1e-6, atol=1e-7, fast_mode=True)


@pytest.mark.parametrize("beta", [0.0, 1.0, 0.25])
@pytest.mark.parametrize("chunk", [1, 10_000])
def test_divergence_matches_full_logits_jsd(beta, chunk):
    """Oracle: :func:`generalized_jsd_loss` on full float64 logits (GKD's formula)."""
    hs, ws, bs, _ = _inputs(31, 6, 203, seed=3)
    ht, wt, bt, _ = _inputs(31, 9, 203, seed=4)
    mask = torch.rand(31, generator=torch.Generator().manual_seed(5)) > 0.3
    hs.requires_grad_()
    ws.requires_grad_()
    wt.requires_grad_()  # must not receive a gradient
    out = chunked_divergence(
        hs, ws, ht, wt, beta=beta, temperature=0.8, mask=mask, student_bias=bs, teacher_bias=bt, chunk=chunk,
        student_softcap=4.0, teacher_logit_scale=1.2, outputs=("divergence", "entropy"),
    )
    zs = 4.0 * torch.tanh((hs @ ws.t() + bs) / 4.0)
    zt = (ht @ wt.t() + bt) * 1.2
    ref = generalized_jsd_loss(zs, zt.detach(), beta=beta, temperature=0.8, reduction="none").sum(-1) * mask
    lps = torch.log_softmax(zs / 0.8, -1)
    torch.testing.assert_close(out["divergence"], ref, atol=1e-10, rtol=1e-10)
    torch.testing.assert_close(out["entropy"], -(lps.exp() * lps).sum(-1).detach() * mask, atol=1e-10, rtol=0)
    g = torch.randn(31, dtype=F64)
    got = torch.autograd.grad((out["divergence"] * g).sum(), [hs, ws])
    want = torch.autograd.grad((ref * g).sum(), [hs, ws])
    for a, b in zip(got, want, strict=True):
        torch.testing.assert_close(a, b, atol=1e-10, rtol=1e-10)
    assert not out["entropy"].requires_grad


@pytest.mark.slow
@pytest.mark.parametrize("gemm", ["auto", "native", "fp32"])
def test_bf16_at_least_as_close_to_fp32_as_naive_bf16(gemm, monkeypatch):
    """bf16 inputs: loss and gradients of hidden, weight and bias vs an fp64 computation on the same bf16 values;
    the engine (each CPU GEMM mode) must be at least as close as the naive bf16 path."""
    if gemm != "auto":
        monkeypatch.setenv("REFERENCE_IMPL_CPU_GEMM", gemm)
    n, h, v = 300, 64, 3001
    hidden, weight, bias, targets = _inputs(n, h, v, dtype=torch.bfloat16, masked_every=7, wscale=0.1)

    def grads(fn, dtype):
        hh = hidden.to(dtype).requires_grad_()
        ww = weight.to(dtype).requires_grad_()
        bb = bias.to(dtype).requires_grad_()
        loss = fn(hh, ww, bb)
        return (loss.double(), *torch.autograd.grad(loss, [hh, ww, bb]))

    def naive(hh, ww, bb):
        logits = hh @ ww.t() + bb  # in the inputs' dtype, like a model's lm_head
        return torch.nn.functional.cross_entropy(logits.float() if logits.dtype != F64 else logits, targets)

    def ours(hh, ww, bb):
        logp = chunked_logprobs(hh, ww, targets, bias=bb, chunk=64)["logp"]
        return -logp.sum() / (targets != -100).sum()

    exact = grads(naive, F64)
    naive_bf16 = grads(naive, torch.bfloat16)
    engine = grads(ours, torch.bfloat16)
    names = ["loss", "d_hidden", "d_weight", "d_bias"]
    for name, e, nb, ex in zip(names, engine, naive_bf16, exact, strict=True):
        assert e.dtype == nb.dtype
        err_engine, err_naive = rel_err(e, ex), rel_err(nb, ex)
        assert err_engine <= 1.1 * err_naive + 1e-6, f"{name}: engine {err_engine:.3e} vs naive bf16 {err_naive:.3e}"


def test_autocast_projects_in_the_autocast_dtype():
    """fp32 master weights under bf16 autocast: the projection runs on bf16 operands like the model's lm_head would
    (same values as bf16 inputs without autocast), and the gradient comes back in the parameter's dtype."""
    hidden, weight, _, targets = _inputs(20, 16, 300, dtype=torch.float32, masked_every=0)
    weight.requires_grad_()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = chunked_logprobs(hidden, weight, targets, chunk=1)["logp"]
    out.sum().backward()
    assert weight.grad.dtype == torch.float32
    same = chunked_logprobs(hidden.bfloat16(), weight.detach().bfloat16(), targets, chunk=1)["logp"]
    torch.testing.assert_close(out, same, atol=1e-6, rtol=0)
    exact = naive_stats(hidden, weight.detach(), targets)["logp"]
    assert (out.double() - exact).abs().max() > 1e-4  # it really did round the operands to bf16


@pytest.mark.slow
def test_frozen_head_allocates_no_weight_gradient():
    """With ``weight.requires_grad=False`` no ``[V, H]`` tensor is allocated anywhere in forward + backward."""
    n, h, v = 64, 256, 4000
    hidden, weight, _, targets = _inputs(n, h, v, dtype=torch.float32, bias=False, masked_every=0)
    hidden.requires_grad_()
    big = v * h * 4
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True) as prof:
        out = chunked_logprobs(hidden, weight, targets, chunk=64, outputs=("logp", "entropy"))
        (out["logp"].sum() + out["entropy"].sum()).backward()
    sizes = [abs(e.cpu_memory_usage) for e in prof.events() if e.cpu_memory_usage > 0]
    assert sizes and max(sizes) < big, f"largest allocation {max(sizes)} bytes >= V*H*4 = {big}"
    assert weight.grad is None and hidden.grad is not None


def test_rejects_bad_arguments():
    hidden, weight, _, targets = _inputs(4, 3, 5)
    with pytest.raises(ValueError, match="outputs"):
        chunked_logprobs(hidden, weight, targets, outputs=("nope",))
    with pytest.raises(ValueError, match="disagree"):
        chunked_logprobs(hidden, weight, targets[:3])
    with pytest.raises(ValueError, match="temperature"):
        chunked_logprobs(hidden, weight, targets, temperature=0.0)
    with pytest.raises(ValueError, match="beta"):
        chunked_divergence(hidden, weight, hidden, weight, beta=1.5)
