"""Triton kernels for the per-tile fold of the chunked LM-head engine (``reference_impl.chunking``).

The engine projects a ``[tokens, Cv]`` tile of logits with the library GEMM (cuBLAS), in the weight's dtype. These
kernels replace the torch ops that follow it, one kernel per direction:

* :func:`fold_forward` -- one program per token row: reads the row twice (block max, then the exponentials) and
  folds it into the running per-token statistics, in the statistics' dtype (fp32; fp64 for fp64 stats): running max,
  sum of ``exp(z - max)``, target logit, and on request ``sum exp * z`` (entropy), ``sum exp^2`` (``log sum p^2``),
  ``sum z`` (mean logit) and the first argmax. With ``write_p`` it also writes ``dz/dlogit * exp(z - max)`` over the
  tile, in the tile's dtype, for the frozen-head gradient GEMM.
* :func:`fold_backward` -- one program per ``(row, column block)``: writes ``dL/dlogit`` over the tile in place, in
  the tile's dtype, from the saved ``log Z`` (and entropy), ``g_logp`` and ``g_entropy``.

``z = f(logit)`` is the engine's transform (logit scale, soft-capping, temperature), applied in registers, so no
fp32 copy of the tile ever exists in memory. The numerics are those of the torch fold (same statistics, same order of
operations per element), tested in Triton's interpreter (``TRITON_INTERPRET=1``) against float64 logits.

Design notes (read, not copied): Apple's Cut Cross-Entropy keeps the whole GEMM in SRAM (no logits in HBM at all);
Liger's fused linear cross-entropy writes the gradient over the bf16 logits chunk in its CE kernel; TRL 1.16's
``trl.kernels`` uses a per-row fold after a cuBLAS GEMM. This module takes the last shape: the GEMMs and the
``dW``-per-vocabulary-block accumulation of the engine are unchanged, only the fold is fused.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import torch
import triton
import triton.language as tl

if TYPE_CHECKING:  # pragma: no cover
    from reference_impl.chunking import _Transform

__all__ = ["fold_backward", "fold_forward"]

# columns per program step; small tiles (the tests) use the next power of two of their width
MAX_BLOCK = 1024


def _forward_kernel(
    tile_ptr, row_stride, n_cols, targets_ptr, v0,
    max_ptr, sum_ptr, target_ptr, xsum_ptr, sqsum_ptr, zsum_ptr, best_ptr, best_idx_ptr, params_ptr,
    SOFTCAP: tl.constexpr, ENTROPY: tl.constexpr, SUMSQ: tl.constexpr, MEAN: tl.constexpr, ARGMAX: tl.constexpr,
    WRITE_P: tl.constexpr, BLOCK: tl.constexpr,
):
    row = tl.program_id(0)
    acc = max_ptr.dtype.element_ty
    pre, post, chain_c = tl.load(params_ptr), tl.load(params_ptr + 1), tl.load(params_ptr + 2)
    base = tile_ptr + row.to(tl.int64) * row_stride
    local = tl.load(targets_ptr + row)  # target id relative to this vocabulary block
    lanes = tl.arange(0, BLOCK)
    # pass 1: block max, first argmax, sum of z, target logit
    m_vec = tl.full([BLOCK], float("-inf"), acc)
    i_vec = tl.zeros([BLOCK], tl.int64)
    zs_vec = tl.zeros([BLOCK], acc)
    t_vec = tl.zeros([BLOCK], acc)
    for start in range(0, n_cols, BLOCK):
        cols = start + lanes
        mask = cols < n_cols
        x = tl.load(base + cols, mask=mask, other=0.0).to(acc)
        if SOFTCAP:
            u = x * pre
            e2 = tl.exp(-2.0 * tl.abs(u))
            th = (1.0 - e2) / (1.0 + e2)
            z = tl.where(u < 0, -th, th) * post
        else:
            z = x * pre
        z = tl.where(mask, z, float("-inf"))
        if ARGMAX:
            i_vec = tl.where(z > m_vec, cols.to(tl.int64), i_vec)  # strict: each lane keeps its first maximum
        m_vec = tl.maximum(m_vec, z)
        if MEAN:
            zs_vec += tl.where(mask, z, 0.0)
        t_vec += tl.where(cols == local, z, 0.0)
    blk_max = tl.max(m_vec, axis=0)
    old_max = tl.load(max_ptr + row)
    new_max = tl.maximum(old_max, blk_max)
    # pass 2: exponentials against the new running max
    s_vec = tl.zeros([BLOCK], acc)
    x_vec = tl.zeros([BLOCK], acc)
    q_vec = tl.zeros([BLOCK], acc)
    for start in range(0, n_cols, BLOCK):
        cols = start + lanes
        mask = cols < n_cols
        x = tl.load(base + cols, mask=mask, other=0.0).to(acc)
        if SOFTCAP:
            u = x * pre
            e2 = tl.exp(-2.0 * tl.abs(u))
            th = (1.0 - e2) / (1.0 + e2)
            z = tl.where(u < 0, -th, th) * post
        else:
            z = x * pre
        e = tl.where(mask, tl.exp(z - new_max), 0.0)
        s_vec += e
        if ENTROPY:
            x_vec += tl.where(mask, e * z, 0.0)
        if SUMSQ:
            q_vec += e * e
        if WRITE_P:
            if SOFTCAP:
                tz = z / post
                chain = (1.0 - tz * tz) * chain_c
            else:
                chain = chain_c
            tl.store(base + cols, (e * chain).to(tile_ptr.dtype.element_ty), mask=mask)
    rescale = tl.exp(old_max - new_max)
    tl.store(max_ptr + row, new_max)
    tl.store(sum_ptr + row, tl.load(sum_ptr + row) * rescale + tl.sum(s_vec, axis=0))
    inside = (local >= 0) & (local < n_cols)
    tl.store(target_ptr + row, tl.where(inside, tl.sum(t_vec, axis=0), tl.load(target_ptr + row)))
    if ENTROPY:
        tl.store(xsum_ptr + row, tl.load(xsum_ptr + row) * rescale + tl.sum(x_vec, axis=0))
    if SUMSQ:
        tl.store(sqsum_ptr + row, tl.load(sqsum_ptr + row) * rescale * rescale + tl.sum(q_vec, axis=0))
    if MEAN:
        tl.store(zsum_ptr + row, tl.load(zsum_ptr + row) + tl.sum(zs_vec, axis=0))
    if ARGMAX:
        first = tl.min(tl.where(m_vec == blk_max, i_vec, n_cols), axis=0)
        old_best = tl.load(best_ptr + row)
        better = blk_max > old_best  # strict: an earlier vocabulary block keeps a tie
        tl.store(best_ptr + row, tl.where(better, blk_max, old_best))
        tl.store(best_idx_ptr + row, tl.where(better, first + v0, tl.load(best_idx_ptr + row)))


def _backward_kernel(
    tile_ptr, row_stride, n_cols, targets_ptr, logz_ptr, glogp_ptr, gent_ptr, ent_ptr, params_ptr,
    SOFTCAP: tl.constexpr, HAS_LOGP: tl.constexpr, HAS_ENT: tl.constexpr, BLOCK: tl.constexpr,
):
    row = tl.program_id(0)
    acc = logz_ptr.dtype.element_ty
    pre, post, chain_c = tl.load(params_ptr), tl.load(params_ptr + 1), tl.load(params_ptr + 2)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    ptrs = tile_ptr + row.to(tl.int64) * row_stride + cols
    x = tl.load(ptrs, mask=mask, other=0.0).to(acc)
    if SOFTCAP:
        u = x * pre
        e2 = tl.exp(-2.0 * tl.abs(u))
        th = (1.0 - e2) / (1.0 + e2)
        z = tl.where(u < 0, -th, th) * post
        chain = (1.0 - th * th) * chain_c
    else:
        z = x * pre
        chain = chain_c
    logp = z - tl.load(logz_ptr + row)
    p = tl.exp(logp)
    if HAS_LOGP:
        g_logp = tl.load(glogp_ptr + row)
    if HAS_ENT:
        # dH/dz_v = -p_v (log p_v + H); with the log-prob term: p_v (alpha - g_ent log p_v)
        g_ent = tl.load(gent_ptr + row)
        alpha = -g_ent * tl.load(ent_ptr + row)
        if HAS_LOGP:
            alpha = alpha - g_logp
        grad = p * (alpha - g_ent * logp)
    else:
        grad = -g_logp * p  # dlogp_y/dz_v = 1[v = y] - p_v
    if HAS_LOGP:
        grad += tl.where(cols == tl.load(targets_ptr + row), g_logp, 0.0)
    tl.store(ptrs, (grad * chain).to(tile_ptr.dtype.element_ty), mask=mask)


@functools.cache
def _kernels(interpret: bool) -> tuple:
    """The jitted kernels; built per mode because ``triton.jit`` reads ``TRITON_INTERPRET`` when it decorates."""
    del interpret  # the cache key
    return triton.jit(_forward_kernel), triton.jit(_backward_kernel)


def _interpret() -> bool:
    from triton import knobs

    return bool(knobs.runtime.interpret)


def _transform_args(transform: _Transform, like: torch.Tensor) -> tuple[torch.Tensor, bool]:
    """``([pre, post, chain_c], softcap)``: ``z = post * tanh(pre * x)`` with soft-capping, else ``z = pre * x``;
    ``dz/dx = chain_c (1 - tanh^2)`` or ``chain_c``. A tensor in the statistics' dtype (Triton would pass Python
    floats as fp32, which fp64 statistics must not see), cached on the transform per device and dtype."""
    cache = transform.__dict__.setdefault("_triton_params", {})
    key = (like.device, like.dtype)
    if key not in cache:
        c = transform.scale * transform.inv_t
        if transform.softcap is None:
            values = (c, 1.0, c)
        else:
            values = (transform.scale / transform.softcap, transform.softcap * transform.inv_t, c)
        cache[key] = torch.tensor(values, dtype=like.dtype, device=like.device)
    return cache[key], transform.softcap is not None


def _block(n_cols: int, block: int | None) -> int:
    return block or min(MAX_BLOCK, triton.next_power_of_2(max(1, n_cols)))


def _check(tile: torch.Tensor) -> None:
    if tile.dim() != 2 or tile.stride(1) != 1:
        raise ValueError(f"the fold needs a row-major 2-D tile, got shape {tuple(tile.shape)} strides {tile.stride()}")
    if tile.device.type == "cpu" and not _interpret():
        raise RuntimeError("the Triton fold got a CPU tile: set TRITON_INTERPRET=1 (tests) or REFERENCE_IMPL_FOLD=torch")


def fold_forward(
    tile: torch.Tensor,
    local_targets: torch.Tensor,
    v0: int,
    running_max: torch.Tensor,
    sum_exp: torch.Tensor,
    target_z: torch.Tensor,
    transform: _Transform,
    *,
    x_sum: torch.Tensor | None = None,
    sq_sum: torch.Tensor | None = None,
    z_sum: torch.Tensor | None = None,
    best: torch.Tensor | None = None,
    best_idx: torch.Tensor | None = None,
    write_p: bool = False,
    block: int | None = None,
) -> None:
    """Fold ``f(tile)`` (``[rows, Cv]`` logits of vocabulary columns ``v0:v0+Cv``) into the per-row statistics, in
    place (each a ``[rows]`` tensor of the statistics' dtype; ``best_idx`` int64). ``local_targets`` are the targets
    minus ``v0`` (int64). ``write_p``: overwrite the tile with ``dz/dlogit * exp(z - new_max)``."""
    _check(tile)
    rows, n_cols = tile.shape
    if rows == 0:
        return
    forward, _ = _kernels(_interpret())
    params, softcap = _transform_args(transform, running_max)
    dummy = running_max
    forward[(rows,)](
        tile, tile.stride(0), n_cols, local_targets.contiguous(), v0,
        running_max, sum_exp, target_z,
        dummy if x_sum is None else x_sum, dummy if sq_sum is None else sq_sum, dummy if z_sum is None else z_sum,
        dummy if best is None else best, local_targets if best_idx is None else best_idx, params,
        SOFTCAP=softcap, ENTROPY=x_sum is not None, SUMSQ=sq_sum is not None, MEAN=z_sum is not None,
        ARGMAX=best is not None, WRITE_P=write_p, BLOCK=_block(n_cols, block),
    )


def fold_backward(
    tile: torch.Tensor,
    local_targets: torch.Tensor,
    log_z: torch.Tensor,
    transform: _Transform,
    *,
    g_logp: torch.Tensor | None = None,
    g_entropy: torch.Tensor | None = None,
    entropy: torch.Tensor | None = None,
    block: int | None = None,
) -> None:
    """Overwrite ``tile`` (the logits, as in :func:`fold_forward`) with ``dL/dlogit`` for
    ``L = sum_i g_logp_i logp_i + g_entropy_i H_i``, in the tile's dtype. ``log_z``/``entropy``: ``[rows]``
    statistics of the whole vocabulary (stats dtype)."""
    _check(tile)
    if g_logp is None and g_entropy is None:
        raise ValueError("fold_backward needs g_logp, g_entropy or both")
    if g_entropy is not None and entropy is None:
        raise ValueError("fold_backward with g_entropy needs the forward's entropy")
    rows, n_cols = tile.shape
    if rows == 0:
        return
    _, backward = _kernels(_interpret())
    params, softcap = _transform_args(transform, log_z)
    blk = _block(n_cols, block)
    backward[(rows, triton.cdiv(n_cols, blk))](
        tile, tile.stride(0), n_cols, local_targets.contiguous(), log_z,
        log_z if g_logp is None else g_logp.contiguous(),
        log_z if g_entropy is None else g_entropy.contiguous(),
        log_z if entropy is None else entropy.contiguous(), params,
        SOFTCAP=softcap, HAS_LOGP=g_logp is not None, HAS_ENT=g_entropy is not None, BLOCK=blk,
    )
