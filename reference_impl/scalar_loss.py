"""The 3-GEMM path for scalar LM-head losses: gradients computed in the forward, the backward is a scale.

:func:`chunked_logprobs` serves any loss written on per-token log-probs, so its backward cannot know the per-token
gradient until the loss has been computed: a trainable head then costs 4 GEMMs (logits, recomputed logits, ``dh``,
``dW``). A loss whose per-token weights are known in the forward -- SFT's NLL (weight 1), DFT (the detached
probability), any ``token_weights`` -- does not need that: ``dL/dz_iv = c_i (p_iv - 1[v = y_i]) dz/dlogit`` with
``c_i = w_i / num_items`` is known as soon as token ``i``'s normaliser is. :func:`chunked_scalar_loss` therefore tiles
**over tokens**: one ``[t, V]`` tile of a token block holds all its logits (in the GEMM dtype, in vocabulary blocks
stored one after another), is folded into the statistics (the engine's fold: Triton on CUDA, torch elsewhere), then
overwritten with the gradient, which feeds ``dh`` and ``dW`` right away: 3 GEMMs, and the backward multiplies the
saved gradients by ``grad_output``.

Memory: the tile gets the engine's budget (``chunk * V * b`` bytes, 4x on GPUs), so ``t`` ~ ``chunk`` tokens; ``dW``
and ``dh`` are allocated in the forward (they are the floor's ``V*H*b + N*H*b``). The weight gradient is summed over
the token blocks in ``dW`` itself, so the path applies where that sum is as exact as the engine's one GEMM per
vocabulary block: a weight (hence ``dW``) in fp32/fp64 (e.g. fp32 master weights under bf16 autocast), or a single
token block. A low-precision weight with several token blocks would round ``dW`` once per block (measured 1.53e-3 for
2 blocks against 1.31e-3, ``reference_impl/README.md``) or need an fp32 ``[V, H]`` buffer above the floor; there, and
with a frozen head (where the engine already needs 2 GEMMs), ``path="auto"`` uses :func:`chunked_logprobs`.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from .chunking import (
    DEFAULT_CHUNK,
    _compute_dtype,
    _fold_backward,
    _fold_forward,
    _mm_accumulate,
    _Plan,
    _stat_dtype,
    _Stats,
    _Transform,
    _weight_grad_block,
    chunked_logprobs,
)
from . import chunking
from .kernels import fold_backend

__all__ = ["SCALAR_OUTPUTS", "chunked_scalar_loss", "scalar_path_applies"]

#: Per-token values :func:`chunked_scalar_loss` can return besides the loss (all detached).
SCALAR_OUTPUTS = ("logp", "entropy", "argmax_correct")
# rows of the CPU fold per step (elements): 4 MiB of fp32; fewer, larger steps than the engine's 1 MiB slabs, which
# measured 2x slower here on a loaded 2-core machine (each op a thread-pool round trip)
SLAB_ELEMS = 1 << 20


class _TokenPlan:
    """Tile of the scalar path: ``token_block`` tokens x the whole vocabulary, in ``vocab_block`` column blocks.

    The bytes are the engine's (:class:`chunking._Plan`): ``chunk * V * b`` (4x on GPUs). Per tile element: the GEMM
    dtype, plus on a GPU without the Triton fold two fp32 temporaries of the whole tile; the CPU fold works on
    cache-sized slabs. Vocabulary blocks: the whole vocabulary in one GEMM when the weight is used as it is; the
    engine's block width when each block is converted (autocast, CPU upcast), so no converted copy of the weight
    exists.
    """

    def __init__(self, n: int, hdim: int, weight: torch.Tensor, chunk: int | None):
        base = _Plan(n, hdim, weight, chunk)
        self.compute, self.stat, self.gemm, self.upcast = base.compute, base.stat, base.gemm, base.upcast
        chunk = DEFAULT_CHUNK if chunk is None else int(chunk)
        vocab = weight.shape[0]
        budget = chunk * vocab * weight.element_size() * (1 if weight.device.type == "cpu" else 4)
        gpu_torch_fold = weight.device.type != "cpu" and fold_backend(weight) is None
        per_elem = torch.finfo(self.gemm).bits // 8 + (8 if gpu_torch_fold else 0)
        self.token_block = max(1, min(n, budget // (vocab * per_elem)))
        self.converts = weight.dtype != self.gemm
        self.vocab_block = base.vocab_block if self.converts else vocab
        self.whole_tile = base.whole_tile
        # the torch fold's slab of rows (~4 MiB fp32 on CPU, the whole tile on a GPU)
        self.slab = self.token_block if self.whole_tile else max(1, SLAB_ELEMS // min(vocab, self.vocab_block))
        self.blocks = -(-n // self.token_block)

    def block(self, w: torch.Tensor) -> torch.Tensor:
        return w.to(self.compute).to(self.gemm)


def _fold_rows_with_gradient(
    tile: torch.Tensor,
    targets: torch.Tensor,
    st: _Stats,
    transform: _Transform,
    plan: _TokenPlan,
    c: torch.Tensor,
    dft: bool,
    write_grad: bool,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Statistics and gradient of a tile whose rows span the whole vocabulary, one cache-sized slab of rows at a time:
    the max, ``e = exp(z - max)`` and its sum give ``log Z`` at once, so the gradient ``c (e / sum e - 1[v = y])
    dz/dlogit`` is written over the slab while it is in cache (torch fold only; no online rescaling). Returns the
    per-token ``c`` (times ``p_y`` for DFT) and ``logp``."""
    rows_total, width = tile.shape
    scratch = torch.empty(min(plan.slab, rows_total) * width, device=tile.device, dtype=plan.stat)
    logp = torch.empty(rows_total, device=tile.device, dtype=plan.stat)
    c = c.clone()
    for r0 in range(0, rows_total, plan.slab):
        r = slice(r0, min(rows_total, r0 + plan.slab))
        z = transform.forward(tile[r], plan.stat, copy=False)  # in place for an fp32 tile
        tgt = targets[r].unsqueeze(1)
        if st.best is not None:
            m, idx = z.max(1)
            st.best[r], st.best_idx[r] = m, idx
        else:
            m = z.amax(1)
        e = torch.sub(z, m.unsqueeze(1), out=scratch[: z.numel()].view_as(z)).exp_()
        s = e.sum(1)
        st.running_max[r], st.sum_exp[r] = m, s
        st.target_z[r] = tz = z.gather(1, tgt).squeeze(1)
        if st.x_sum is not None:
            st.x_sum[r] = torch.linalg.vecdot(e, z)
        logp[r] = tz - m - torch.log(s)
        if dft:
            c[r] *= logp[r].exp()
        if not write_grad:
            continue
        chain = transform.chain(z)  # before z (an alias of the tile for fp32) is overwritten
        grad = e.mul_((c[r] / s).unsqueeze(1))
        grad.scatter_add_(1, tgt, -c[r].unsqueeze(1))
        if not isinstance(chain, float) or chain != 1.0:
            grad.mul_(chain)
        tile[r].copy_(grad)
    return c, logp


def scalar_path_applies(n: int, hidden: torch.Tensor, weight: torch.Tensor, chunk: int | None = None) -> bool:
    """Whether :func:`chunked_scalar_loss`'s 3-GEMM path is as exact as the engine for ``n`` valid tokens: the
    weight gradient is fp32/fp64, or all tokens fit one token block (see the module doc)."""
    if not weight.requires_grad:
        return False
    if weight.dtype in (torch.float32, torch.float64):
        return True
    return _TokenPlan(n, hidden.shape[-1], weight, chunk).blocks == 1


class _ScalarLossFunction(torch.autograd.Function):
    """``sum_i c_i * (-logp_i)`` over the valid tokens ``h [n, H]`` with detached ``c [n]`` known after each token's
    normaliser: ``c = token_weights / num_items`` (times ``p_i`` for DFT). Gradients in the forward."""

    @staticmethod
    def forward(ctx, hidden, weight, bias, targets, token_weights, transform, denom, dft, chunk, outputs, grad_mode):
        ctx.set_materialize_grads(False)
        n, hdim = hidden.shape
        # needs_input_grad says True under torch.no_grad() too: evaluation must not pay for gradients
        needs_h, needs_w, needs_b = (need and grad_mode for need in ctx.needs_input_grad[:3])
        want = set(outputs)
        with chunking.gathered(weight, bias):  # the engine's one doorway to a sharded head (see zero3.py)
            vocab = weight.shape[0]
            plan = _TokenPlan(n, hdim, weight, chunk)
            sdtype, device = plan.stat, hidden.device
            st = _Stats(n, want, device, sdtype)
            grad_h = torch.zeros(n, hdim, device=device, dtype=sdtype) if needs_h else None
            # several token blocks sum into dW: the first writes it (same dtype) or it starts from zeros
            summed = plan.blocks > 1 and plan.gemm != weight.dtype
            grad_w = (torch.zeros if summed else torch.empty)(weight.shape, device=device, dtype=weight.dtype) \
                if needs_w else None
            grad_b = torch.zeros(vocab, device=device, dtype=sdtype) if needs_b else None
            loss = torch.zeros((), device=device, dtype=sdtype)
            tile_buf = torch.empty(min(n, plan.token_block) * vocab, device=device, dtype=plan.gemm)
            h_all = hidden.to(plan.compute).to(plan.gemm)
            vblocks = [(v0, min(vocab, v0 + plan.vocab_block)) for v0 in range(0, vocab, plan.vocab_block)]
            w_whole = None if plan.converts else weight
            # torch fold with the whole vocabulary in one block: the row-complete fold below (Triton: its two kernels)
            one_pass = len(vblocks) == 1 and fold_backend(tile_buf) is None
            for t0 in range(0, n, plan.token_block):
                t1 = min(n, t0 + plan.token_block)
                h_blk, tgt_blk, rows = h_all[t0:t1], targets[t0:t1], st.rows(t0, t1)
                tiles = [tile_buf[(t1 - t0) * v0 : (t1 - t0) * v1].view(t1 - t0, v1 - v0) for v0, v1 in vblocks]
                needs_grad = needs_h or needs_w or needs_b
                c_blk = token_weights[t0:t1].to(sdtype) / denom
                # 1st GEMM: the token block's logits, block by block
                for (v0, v1), tile in zip(vblocks, tiles, strict=True):
                    w_blk = w_whole[v0:v1] if w_whole is not None else plan.block(weight[v0:v1])
                    torch.mm(h_blk, w_blk.t(), out=tile)
                    if bias is not None:
                        tile.add_(bias[v0:v1].to(plan.compute).to(plan.gemm))
                    del w_blk
                    if not one_pass:  # folded as they come, logits kept for the gradient pass
                        _fold_forward(tile, tgt_blk - v0, v0, rows, transform, plan, True)
                if one_pass:  # every row of the tile sees the whole vocabulary: statistics and gradient in one visit
                    c, logp = _fold_rows_with_gradient(tiles[0], tgt_blk, rows, transform, plan, c_blk, dft, needs_grad)
                else:
                    logp = rows.target_z - rows.log_z()
                    c = c_blk * logp.exp() if dft else c_blk
                loss -= (c * logp).sum()
                if not needs_grad:
                    continue
                # the gradient over the tile, then the 2nd and 3rd GEMMs
                for (v0, v1), tile in zip(vblocks, tiles, strict=True):
                    if one_pass:
                        if grad_b is not None:
                            grad_b += tile.sum(0, dtype=sdtype)
                    else:
                        _fold_backward(tile, tgt_blk - v0, rows.log_z(), transform, plan, g_logp=-c, g_ent=None,
                                       entropy=None, grad_bias=None if grad_b is None else grad_b[v0:v1])
                    if grad_h is None and grad_w is None:
                        continue
                    w_blk = w_whole[v0:v1] if w_whole is not None else plan.block(weight[v0:v1])
                    if grad_h is not None:
                        _mm_accumulate(grad_h[t0:t1], tile, w_blk)
                    if grad_w is not None:
                        if plan.blocks == 1:  # one GEMM over every token, rounded once
                            _weight_grad_block(grad_w[v0:v1], tile, h_blk, w_buf=w_blk)
                        elif t0 == 0 and not summed:
                            torch.mm(tile.t(), h_blk, out=grad_w[v0:v1])
                        else:  # fp32/fp64 dW: the sum over token blocks is exact to fp32
                            _mm_accumulate(grad_w[v0:v1], tile.t(), h_blk)
                    del w_blk
            result = st.outputs(want | {"logp"}, targets, vocab)
        ctx.grads = (
            None if grad_h is None else grad_h.to(hidden.dtype),
            grad_w,
            None if grad_b is None else grad_b.to(bias.dtype),
        )
        per_token = [result[k] for k in outputs]
        ctx.mark_non_differentiable(*per_token)
        return (loss, *per_token)

    @staticmethod
    def backward(ctx, g_loss, *_):
        if ctx.grads is None:
            raise RuntimeError(
                "chunked_scalar_loss computes its gradients in the forward and hands them over on the first backward; "
                "a second backward (retain_graph=True) needs path='engine'"
            )
        grads, ctx.grads = ctx.grads, None
        if g_loss is None:
            return (None,) * 11
        if not bool(g_loss == 1):
            grads = tuple(None if g is None else g.mul_(g_loss.to(g.dtype)) for g in grads)
        return (*grads, *(None,) * 8)


def chunked_scalar_loss(
    hidden: torch.Tensor,
    weight: torch.Tensor,
    targets: torch.Tensor,
    *,
    bias: torch.Tensor | None = None,
    loss_type: str = "nll",
    token_weights: torch.Tensor | None = None,
    num_items_in_batch: int | torch.Tensor | None = None,
    temperature: float = 1.0,
    logit_scale: float = 1.0,
    softcap: float | None = None,
    ignore_index: int = -100,
    chunk: int | None = None,
    outputs: Sequence[str] = (),
    path: str = "auto",
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Token-level loss ``sum_i w_i * l_i / num_items`` of ``softmax(f(hidden @ weight.T + bias))`` (``f`` as in
    :func:`chunked_logprobs`), with ``l_i = -logp_i`` (``"nll"``) or ``-logp_i * exp(logp_i).detach()`` (``"dft"``).

    Args:
        hidden, weight, targets, bias, temperature, logit_scale, softcap, ignore_index, chunk: as in
            :func:`chunked_logprobs` (positions whose target is ``ignore_index`` are skipped).
        loss_type: ``"nll"`` or ``"dft"`` (TRL's ``SFTConfig.loss_type``; ``reference_impl.losses.sft``).
        token_weights: optional per-token weights of ``targets``' shape, treated as constants.
        num_items_in_batch: the divisor (gradient accumulation across micro-batches); default: the number of valid
            tokens; clamped to at least 1.
        outputs: per-token values to return as well, any of :data:`SCALAR_OUTPUTS` (detached; 0 where ignored).
        path: ``"auto"`` (the 3-GEMM path where :func:`scalar_path_applies`, else the engine), ``"scalar"`` (always
            the 3-GEMM path), ``"engine"`` (always :func:`chunked_logprobs` then the weighted sum).

    Returns:
        ``(loss, {name: tensor of targets' shape})``: a 0-dim float32 loss (float64 for float64 inputs).
    """
    if loss_type not in ("nll", "dft"):
        raise ValueError(f"loss_type must be 'nll' or 'dft', got {loss_type!r}")
    if path not in ("auto", "scalar", "engine"):
        raise ValueError(f"path must be 'auto', 'scalar' or 'engine', got {path!r}")
    outputs = tuple(dict.fromkeys(outputs))
    if set(outputs) - set(SCALAR_OUTPUTS):
        raise ValueError(f"outputs must be a subset of {SCALAR_OUTPUTS}, got {outputs}")
    if hidden.shape[:-1] != targets.shape:
        raise ValueError(f"hidden {tuple(hidden.shape)} and targets {tuple(targets.shape)} disagree")
    if token_weights is not None and token_weights.shape != targets.shape:
        raise ValueError(f"token_weights {tuple(token_weights.shape)} must have targets' shape {tuple(targets.shape)}")
    flat_h = hidden.reshape(-1, hidden.shape[-1])
    flat_t = targets.reshape(-1)
    valid = flat_t != ignore_index
    idx = valid.nonzero().squeeze(1)
    n = idx.numel()
    sdtype = _stat_dtype(_compute_dtype(weight))
    denom = float(n if num_items_in_batch is None else num_items_in_batch)
    denom = max(denom, 1.0)
    weights = None if token_weights is None else token_weights.reshape(-1).detach()
    use_scalar = path == "scalar" or (path == "auto" and n > 0 and scalar_path_applies(n, hidden, weight, chunk))
    if not use_scalar:
        stats = chunked_logprobs(hidden, weight, targets, bias=bias, temperature=temperature, logit_scale=logit_scale,
                                 softcap=softcap, ignore_index=ignore_index, chunk=chunk,
                                 outputs=("logp", *[o for o in outputs if o != "logp"]))
        logp = stats["logp"].reshape(-1)
        per_token = -logp * (logp.detach().exp() if loss_type == "dft" else 1.0)
        if weights is not None:
            per_token = per_token * weights.to(per_token.dtype)
        loss = (per_token * valid.to(per_token.dtype)).sum() / denom
        return loss, {k: stats[k].detach() for k in outputs}
    if n == 0:
        zero = (flat_h.sum() + weight.sum() + (bias.sum() if bias is not None else 0.0)) * 0.0
        return zero.to(sdtype), {k: torch.zeros(targets.shape, device=hidden.device, dtype=sdtype) for k in outputs}
    all_valid = n == flat_t.numel()
    h_valid = flat_h if all_valid else flat_h.index_select(0, idx)
    t_valid = flat_t if all_valid else flat_t.index_select(0, idx)
    w_valid = torch.ones(n, device=hidden.device, dtype=sdtype) if weights is None else (
        weights if all_valid else weights.index_select(0, idx))
    transform = _Transform(logit_scale, softcap, temperature)
    loss, *values = _ScalarLossFunction.apply(
        h_valid, weight, bias, t_valid, w_valid, transform, denom, loss_type == "dft", chunk, outputs,
        torch.is_grad_enabled(),
    )
    result = {}
    for name, value in zip(outputs, values, strict=True):
        if not all_valid:
            value = torch.zeros(flat_t.shape, device=value.device, dtype=value.dtype).index_put((idx,), value)
        result[name] = value.reshape(targets.shape)
    return loss, result
