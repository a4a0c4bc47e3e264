"""The chunked LM-head engine: per-token statistics of ``hidden @ weight.T`` without the ``[N, V]`` logits.

Every loss family in :mod:`reference_impl.losses` that needs log-probabilities from an LM head goes through the two
public functions here:

* :func:`chunked_logprobs` -- per-token log-prob of the target token and, on request, the entropy, whether the target
  is the argmax, the mean logit and ``log(sum_v p_v^2)`` (WPO weighting).
* :func:`chunked_divergence` -- per-token forward KL / reverse KL / generalised JSD between a student and a teacher
  head (distillation, GKD), gradient to the student only.

How it works (``reference_impl/README.md`` has the measurements behind each choice):

* **Tiles.** Positions whose target is ``ignore_index`` are dropped first (skipped, not computed and masked). The
  remaining ``n`` tokens are projected onto one vocabulary block at a time: a ``[n, Cv]`` tile in the compute dtype
  (the weight's dtype, or the autocast dtype; no fp32 copy of the weight ever exists). Each tile is folded into
  online-logsumexp statistics in fp32 -- on CPU a cache-sized slab of rows at a time, on GPU whole. The tile gets the
  bytes a token-chunked loss spends on one ``chunk``-token chunk of logits (``chunk * V * b``; 4x on GPUs), so peak
  memory stays at the tiled floor ``V*H*b + N*H*b + C*V*(b+4)``.
* **The fold.** :func:`_fold_forward` / :func:`_fold_backward` turn a tile into statistics / gradients. On CUDA, when
  ``triton`` imports, each is one Triton kernel (:mod:`reference_impl.kernels`; ``REFERENCE_IMPL_FOLD`` overrides);
  the torch ops in them are the readable reference and the fallback, with the same numerics.
* **Scalar losses.** :mod:`reference_impl.scalar_loss` reuses the folds for losses whose per-token weights are known
  in the forward (SFT's NLL/DFT): gradients in the forward, 3 GEMMs.
* **CPU without bf16 hardware.** There oneDNN emulates bf16 GEMMs 6-7x slower than fp32, so each ``[Cv, H]`` weight
  block (never the weight) is upcast and the GEMMs run in fp32 (:func:`cpu_has_native_gemm`).
* **Weight gradient.** Because a tile spans *all* tokens of the call, the gradient of a vocabulary block,
  ``dW[block] = G[:, block].T @ h``, is one GEMM: its sum over tokens is accumulated in fp32 inside the GEMM and
  rounded to the weight dtype once -- no ``V*H*4`` fp32 accumulator, no per-chunk bf16 rounding. When the tokens
  must be split (``chunk`` tiny for ``N``), each block's gradient is summed over the token blocks in an fp32
  ``[Cv, H]`` buffer. The hidden-state gradient sums over vocabulary blocks into an fp32 ``[n, H]`` buffer with
  exact products (``out_dtype`` GEMM on CUDA, fp32 operands on CPU).
* **Backward.** Trainable head: the backward recomputes each tile (what TRL 1.16 does); when every logit of the call
  fits in one tile, the forward's tile is kept instead and the recompute GEMM is skipped. Frozen head: the forward
  also accumulates ``sum_v p_v W_v`` (one more GEMM) so the backward needs no GEMM at all (``backward="auto"``);
  measured against recomputing in ``reference_impl/README.md``. Gradients go only to inputs that require them; a
  frozen head allocates no weight gradient.
* **ZeRO-3.** A partitioned weight is gathered once in the forward and once in the backward (:mod:`.zero3`).
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Sequence

import torch

from .kernels import fold_backend
from .zero3 import gathered

__all__ = ["LOGPROB_OUTPUTS", "DIVERGENCE_OUTPUTS", "chunked_logprobs", "chunked_divergence"]

#: Names :func:`chunked_logprobs` can return. ``logp`` and ``entropy`` are differentiable, the rest are not.
LOGPROB_OUTPUTS = ("logp", "entropy", "argmax_correct", "mean_logit", "logsumsq")
#: Names :func:`chunked_divergence` can return. ``divergence`` is differentiable (student only), ``entropy`` is not.
DIVERGENCE_OUTPUTS = ("divergence", "entropy")

DEFAULT_CHUNK = 256
# fp32 scratch per slab of tile rows (elements): ~1 MiB, sized for the caches
_SLAB_ELEMS = 1 << 18
# narrowest vocabulary block worth a GEMM; bounds the tokens per tile at budget / _MIN_VOCAB_BLOCK
_MIN_VOCAB_BLOCK = 256


# ------------------------------------------------------------------------------------------------------------------
# helpers


def _compute_dtype(weight: torch.Tensor) -> torch.dtype:
    """The projection dtype: the autocast dtype when autocast is on for the weight's device, else the weight's."""
    dev = weight.device.type
    if dev in ("cuda", "cpu", "xpu") and torch.is_autocast_enabled(dev) and weight.dtype.is_floating_point:
        return torch.get_autocast_dtype(dev)
    return weight.dtype


def _stat_dtype(compute_dtype: torch.dtype) -> torch.dtype:
    """fp32 softmax statistics (fp64 when the compute dtype is fp64, e.g. for gradcheck)."""
    return torch.float64 if compute_dtype == torch.float64 else torch.float32


@functools.cache
def _cpu_flags() -> frozenset[str]:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def cpu_has_native_gemm(dtype: torch.dtype) -> bool:
    """Whether this CPU multiplies ``dtype`` matrices in hardware (AVX512-BF16/AMX for bf16, AVX512-FP16/AMX for fp16).

    Without it, oneDNN emulates bf16/fp16 GEMMs, measured 6x *slower* than fp32 on this project's Zen 3 CPU
    (``reference_impl/README.md``). ``REFERENCE_IMPL_CPU_GEMM=native`` or ``=fp32`` overrides the detection.
    """
    if dtype in (torch.float32, torch.float64):
        return True
    override = os.environ.get("REFERENCE_IMPL_CPU_GEMM", "").lower()
    if override in ("native", "fp32"):
        return override == "native"
    flags = _cpu_flags()
    if dtype == torch.bfloat16:
        return bool(flags & {"avx512_bf16", "amx_bf16"})
    if dtype == torch.float16:
        return bool(flags & {"avx512_fp16", "amx_fp16"})
    return False


class _Plan:
    """Dtypes and tile shape of one call.

    ``compute``: the projection dtype (weight's or autocast's). ``gemm``: the dtype the GEMMs actually run in --
    ``compute``, except on a CPU without native ``compute`` GEMMs, where each ``[Cv, H]`` weight block and the hidden
    states are upcast to fp32 (block copies only; never the whole weight). ``stat``: softmax statistics (fp32).

    The tile gets the bytes a token-chunked loss spends on one chunk of ``chunk`` tokens' logits in the weight's
    dtype (``chunk * V * b``), fp32 weight-block copies included. It spans every token of the call when that leaves
    a vocabulary block of at least ``_MIN_VOCAB_BLOCK`` columns (then each block's weight gradient is a single GEMM);
    otherwise the tokens are split and each block's weight gradient is summed over the token blocks in an fp32
    ``[Cv, H]`` buffer, so precision does not depend on the split.
    """

    def __init__(self, n: int, hdim: int, weight: torch.Tensor, chunk: int | None):
        self.compute = _compute_dtype(weight)
        self.stat = _stat_dtype(self.compute)
        lowp = self.compute in (torch.bfloat16, torch.float16)
        cpu = weight.device.type == "cpu"
        self.upcast = cpu and lowp and not cpu_has_native_gemm(self.compute)
        self.gemm = torch.float32 if self.upcast else self.compute
        # native low-precision GEMMs on CPU: the hidden-state gradient sums over vocabulary blocks and CPU has no
        # bf16 x bf16 -> fp32 GEMM, so those GEMMs run on fp32 copies of the tile and the block
        self.dh_fp32 = cpu and lowp and not self.upcast
        chunk = DEFAULT_CHUNK if chunk is None else int(chunk)
        if chunk <= 0:
            raise ValueError(f"chunk must be positive, got {chunk}")
        vocab = weight.shape[0]
        budget = max(1, chunk * vocab * weight.element_size())  # bytes
        if weight.device.type != "cpu":
            # GPUs pay per kernel launch: 4x larger tiles keep s3 in 2 vocabulary blocks, s1 in 10 (README)
            budget *= 4
        # on a GPU the fp32 softmax runs on the whole tile at once (slabs would be one kernel launch each), so the
        # tile shares the budget with about two fp32 temporaries of its size; on CPU the slabs are cache-sized
        self.whole_tile = weight.device.type != "cpu"
        # the Triton fold works in registers: no fp32 temporaries, so the tile takes their share of the budget
        temporaries = 8 if self.whole_tile and fold_backend(weight) is None else 0
        per_elem = torch.finfo(self.gemm).bits // 8 + (4 if self.dh_fp32 else 0) + temporaries
        w_rows = 1 if (self.upcast or self.dh_fp32) else 0  # fp32 [Cv, H] weight-block copies
        row_bytes = 4 * hdim

        def columns(tokens: int, split: bool) -> int:
            return budget // (per_elem * tokens + row_bytes * (w_rows + int(split)))

        min_vb = min(vocab, _MIN_VOCAB_BLOCK)
        if columns(n, False) >= min_vb:
            self.token_block = n
        else:
            self.token_block = max(1, min(n, (budget // min_vb - row_bytes * (w_rows + 1)) // per_elem))
        self.split = self.token_block < n
        self.vocab_block = max(1, min(vocab, columns(self.token_block, self.split)))
        self.slab = self.token_block if self.whole_tile else max(1, _SLAB_ELEMS // self.vocab_block)
        self.single_tile = not self.split and self.vocab_block >= vocab

    def tokens(self, h: torch.Tensor) -> torch.Tensor:
        """Hidden states of a token block in the GEMM dtype (rounded to the compute dtype first)."""
        return h.to(self.compute).to(self.gemm)

    def block(self, w: torch.Tensor) -> torch.Tensor:
        """A ``[Cv, H]`` weight block in the GEMM dtype."""
        return w.to(self.compute).to(self.gemm)


class _Transform:
    """``z = f(logits)``: ``logit_scale``, then Gemma soft-capping, then temperature; and ``dz/dlogits``."""

    def __init__(self, logit_scale: float, softcap: float | None, temperature: float):
        if temperature <= 0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        self.scale = float(logit_scale)
        self.softcap = None if softcap is None else float(softcap)
        self.inv_t = 1.0 / float(temperature)

    def forward(self, tile: torch.Tensor, dtype: torch.dtype, copy: bool = True) -> torch.Tensor:
        """``f(tile)`` in ``dtype`` (fp32); a new tensor unless ``copy=False`` and ``tile`` already has ``dtype``."""
        z = tile.to(dtype, copy=copy)
        if self.softcap is None:
            factor = self.scale * self.inv_t
            if factor != 1.0:
                z.mul_(factor)
        else:
            z.mul_(self.scale / self.softcap).tanh_().mul_(self.softcap * self.inv_t)
        return z

    def chain(self, z: torch.Tensor) -> torch.Tensor | float:
        """``dz/dlogit`` as a function of ``z = f(logit)``: a scalar without soft-capping."""
        if self.softcap is None:
            return self.scale * self.inv_t
        t = z * (1.0 / (self.softcap * self.inv_t))
        return (1.0 - t * t).mul_(self.scale * self.inv_t)


def _mm_accumulate(acc: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> None:
    """``acc += a @ b`` for an fp32 ``acc`` without rounding ``a @ b`` to the operands' dtype first: an ``out_dtype``
    GEMM on CUDA, fp32 operands elsewhere (CPU has no bf16 x bf16 -> fp32 GEMM). Rounding each vocabulary block's
    product to bf16 before the sum measured 1.4x naive's hidden-state gradient error."""
    if a.dtype == acc.dtype and b.dtype == acc.dtype:
        acc.addmm_(a, b)
    elif acc.device.type == "cuda":
        torch.addmm(acc, a, b, out_dtype=acc.dtype, out=acc)
    else:
        acc.addmm_(a.to(acc.dtype), b.to(acc.dtype))


class _Stats:
    """Per-token online-softmax statistics of one call (fp32; fp64 for fp64 inputs), each ``[n]``; ``rows(t0, t1)``
    gives views of a token block, which the folds update in place."""

    def __init__(self, n: int, want: set[str] | Sequence[str], device: torch.device, dtype: torch.dtype):
        def stat(fill: float = 0.0) -> torch.Tensor:
            return torch.full((n,), fill, device=device, dtype=dtype)

        self.running_max, self.sum_exp, self.target_z = stat(-math.inf), stat(), stat()
        self.x_sum = stat() if "entropy" in want else None
        self.sq_sum = stat() if "logsumsq" in want else None
        self.z_sum = stat() if "mean_logit" in want else None
        self.best = stat(-math.inf) if "argmax_correct" in want else None
        self.best_idx = torch.zeros(n, device=device, dtype=torch.long) if self.best is not None else None

    def rows(self, t0: int, t1: int) -> _Stats:
        view = object.__new__(_Stats)
        view.__dict__.update({k: None if v is None else v[t0:t1] for k, v in self.__dict__.items()})
        return view

    def log_z(self) -> torch.Tensor:
        return self.running_max + torch.log(self.sum_exp)

    def outputs(self, want: set[str] | Sequence[str], targets: torch.Tensor, vocab: int) -> dict[str, torch.Tensor]:
        """The requested :data:`LOGPROB_OUTPUTS` from the folded statistics."""
        log_z = self.log_z()
        result = {}
        if "logp" in want:
            result["logp"] = self.target_z - log_z
        if "entropy" in want:
            result["entropy"] = log_z - self.x_sum / self.sum_exp
        if "logsumsq" in want:
            result["logsumsq"] = torch.log(self.sq_sum) - 2 * torch.log(self.sum_exp)
        if "mean_logit" in want:
            result["mean_logit"] = self.z_sum / vocab
        if "argmax_correct" in want:
            result["argmax_correct"] = (self.best_idx == targets).to(self.sum_exp.dtype)
        return result


def _fold_forward(
    tile: torch.Tensor,
    local: torch.Tensor,
    v0: int,
    st: _Stats,
    transform: _Transform,
    plan: _Plan,
    keep_tile: bool,
    acc_a: torch.Tensor | None = None,
    w_blk: torch.Tensor | None = None,
) -> None:
    """Fold the logits ``tile [t, Cv]`` (vocabulary columns ``v0:``; ``local`` = targets - ``v0``) into the token
    block's statistics ``st``. ``keep_tile``: leave the logits intact. ``acc_a``: the frozen-head gradient-in-forward
    accumulator ``sum_v dz_v/dlogit_v exp(z_v - m) W_v`` of these tokens, rescaled with the running max."""
    fused = fold_backend(tile)
    if fused is not None:  # one Triton kernel (reference_impl/kernels); the torch ops below are the reference
        old_max = st.running_max.clone() if acc_a is not None else None
        fused.fold_forward(tile, local, v0, st.running_max, st.sum_exp, st.target_z, transform, x_sum=st.x_sum,
                           sq_sum=st.sq_sum, z_sum=st.z_sum, best=st.best, best_idx=st.best_idx,
                           write_p=acc_a is not None)
        if acc_a is not None:
            _mm_accumulate(acc_a.mul_(torch.exp(old_max - st.running_max).unsqueeze(1)), tile, w_blk)
        return
    width = tile.shape[1]
    for r0 in range(0, tile.shape[0], plan.slab):
        rows = slice(r0, min(tile.shape[0], r0 + plan.slab))
        z = transform.forward(tile[rows], plan.stat, copy=keep_tile)
        loc = local[rows]
        inside = (loc >= 0) & (loc < width)
        tz = z.gather(1, loc.clamp(0, width - 1).unsqueeze(1)).squeeze(1)
        st.target_z[rows] = torch.where(inside, tz, st.target_z[rows])
        if st.z_sum is not None:
            st.z_sum[rows] += z.sum(1)
        if st.best is not None:
            blk_max, blk_idx = z.max(1)
            better = blk_max > st.best[rows]
            st.best[rows] = torch.where(better, blk_max, st.best[rows])
            st.best_idx[rows] = torch.where(better, blk_idx + v0, st.best_idx[rows])
        else:
            blk_max = z.amax(1)
        old_max = st.running_max[rows]
        new_max = torch.maximum(old_max, blk_max)
        rescale = torch.exp(old_max - new_max)
        st.running_max[rows] = new_max
        chain = transform.chain(z) if acc_a is not None else None
        if st.x_sum is not None:
            e = torch.exp(z - new_max.unsqueeze(1))
            st.x_sum[rows] = st.x_sum[rows] * rescale + torch.linalg.vecdot(e, z)
        else:
            e = z.sub_(new_max.unsqueeze(1)).exp_()
        st.sum_exp[rows] = st.sum_exp[rows] * rescale + e.sum(1)
        if st.sq_sum is not None:
            st.sq_sum[rows] = st.sq_sum[rows] * rescale * rescale + torch.linalg.vecdot(e, e)
        if acc_a is not None:
            pe = e if isinstance(chain, float) else e.mul_(chain)
            scale = chain if isinstance(chain, float) else 1.0
            acc_rows = acc_a[rows].mul_(rescale.unsqueeze(1))
            _mm_accumulate(acc_rows, pe.to(plan.gemm).mul_(scale), w_blk)


def _fold_backward(
    tile: torch.Tensor,
    local: torch.Tensor,
    log_z: torch.Tensor,
    transform: _Transform,
    plan: _Plan,
    *,
    g_logp: torch.Tensor | None,
    g_ent: torch.Tensor | None,
    entropy: torch.Tensor | None,
    grad_bias: torch.Tensor | None,
) -> None:
    """Overwrite the logits ``tile [t, Cv]`` with ``dL/dlogit`` of ``L = sum_i g_logp_i logp_i + g_ent_i H_i``
    (``local`` = targets - the block's first column); add its column sums to ``grad_bias`` (fp32, the block's)."""
    fused = fold_backend(tile)
    if fused is not None:  # one Triton kernel (reference_impl/kernels); the torch ops below are the reference
        fused.fold_backward(tile, local, log_z, transform, g_logp=g_logp, g_entropy=g_ent, entropy=entropy)
        if grad_bias is not None:
            grad_bias += tile.sum(0, dtype=grad_bias.dtype)
        return
    width = tile.shape[1]
    for r0 in range(0, tile.shape[0], plan.slab):
        rows = slice(r0, min(tile.shape[0], r0 + plan.slab))
        z = transform.forward(tile[rows], plan.stat, copy=False)
        chain = transform.chain(z)
        lz = log_z[rows].unsqueeze(1)
        if g_ent is None:
            # dlogp_y/dz_v = 1[v = y] - p_v
            grad = z.sub_(lz).exp_().mul_(-g_logp[rows].unsqueeze(1))
        else:
            # dH/dz_v = -p_v (log p_v + H); with the log-prob term: p_v (alpha - g_ent log p_v)
            logp = z.sub_(lz)
            p = torch.exp(logp)
            alpha = -g_ent[rows] * entropy[rows]
            if g_logp is not None:
                alpha = alpha - g_logp[rows]
            grad = logp.mul_(-g_ent[rows].unsqueeze(1)).add_(alpha.unsqueeze(1)).mul_(p)
        if g_logp is not None:
            loc = local[rows]
            inside = ((loc >= 0) & (loc < width)).nonzero().squeeze(1)
            if inside.numel():
                grad[inside, loc[inside]] += g_logp[rows][inside]
        if not isinstance(chain, float) or chain != 1.0:
            grad.mul_(chain)
        if grad_bias is not None:
            grad_bias += grad.sum(0)
        if grad.data_ptr() != tile[rows].data_ptr():
            tile[rows].copy_(grad)


# ------------------------------------------------------------------------------------------------------------------
# log-probs


class _LogProbFunction(torch.autograd.Function):
    """Per-token statistics of ``softmax(f(h @ W.T + b))`` over the valid tokens ``h [n, H]``; see the module doc."""

    @staticmethod
    def forward(ctx, hidden, weight, bias, targets, transform, chunk, outputs, backward_mode):
        ctx.set_materialize_grads(False)
        n, hdim = hidden.shape
        want = set(outputs)
        needs_h, needs_w, needs_b = ctx.needs_input_grad[:3]
        grad_in_forward = needs_h and not needs_w and not needs_b and backward_mode in ("auto", "forward")
        with gathered(weight, bias):
            vocab = weight.shape[0]
            plan = _Plan(n, hdim, weight, chunk)
            sdtype, device = plan.stat, hidden.device
            keep_tile = plan.single_tile and (needs_w or needs_b or (needs_h and not grad_in_forward))

            st = _Stats(n, want, device, sdtype)
            # grad-in-forward (frozen head): A = sum_v dz_v/dlogit_v * exp(z_v - m) * W_v, rescaled with the max
            acc_a = torch.zeros(n, hdim, device=device, dtype=sdtype) if grad_in_forward else None

            tile_buf = torch.empty(
                min(n, plan.token_block) * min(vocab, plan.vocab_block), device=device, dtype=plan.gemm
            )
            h_all = plan.tokens(hidden)
            for v0 in range(0, vocab, plan.vocab_block):
                v1 = min(vocab, v0 + plan.vocab_block)
                w_blk = None  # drop the previous block before the next fp32 copy exists
                w_blk = plan.block(weight[v0:v1])
                for t0 in range(0, n, plan.token_block):
                    t1 = min(n, t0 + plan.token_block)
                    h_blk, tgt_blk = h_all[t0:t1], targets[t0:t1]
                    tile = tile_buf[: (t1 - t0) * (v1 - v0)].view(t1 - t0, v1 - v0)
                    torch.mm(h_blk, w_blk.t(), out=tile)
                    if bias is not None:
                        tile.add_(bias[v0:v1].to(plan.compute).to(plan.gemm))
                    acc_blk = None if acc_a is None else acc_a[t0:t1]
                    _fold_forward(tile, tgt_blk - v0, v0, st.rows(t0, t1), transform, plan, keep_tile, acc_blk, w_blk)
            log_z, target_z, sum_exp = st.log_z(), st.target_z, st.sum_exp
            result = st.outputs(want, targets, vocab)

        if acc_a is not None:
            acc_a.div_(sum_exp.unsqueeze(1))
        entropy = result.get("entropy")
        placeholder = log_z
        ctx.save_for_backward(
            hidden,
            weight,
            bias,
            targets,
            log_z,
            entropy if entropy is not None else placeholder,
            target_z,
            acc_a if acc_a is not None else placeholder,
        )
        # not through save_for_backward: the backward overwrites it in place with gradients (and drops it after)
        ctx.saved_tile = tile_buf if keep_tile else None
        ctx.transform, ctx.chunk, ctx.outputs = transform, chunk, tuple(outputs)
        ctx.grad_in_forward, ctx.keep_tile = grad_in_forward, keep_tile
        ctx.autocast_dtype = plan.compute
        ctx.mark_non_differentiable(*[result[k] for k in ("argmax_correct", "mean_logit", "logsumsq") if k in result])
        return tuple(result[k] for k in outputs)

    @staticmethod
    def backward(ctx, *grads):
        hidden, weight, bias, targets, log_z, entropy, target_z, acc_a = ctx.saved_tensors
        needs_h, needs_w, needs_b = ctx.needs_input_grad[:3]
        none = (None,) * 8
        g_logp = grads[ctx.outputs.index("logp")] if "logp" in ctx.outputs else None
        g_ent = grads[ctx.outputs.index("entropy")] if "entropy" in ctx.outputs else None
        if g_logp is None and g_ent is None:
            return none
        transform = ctx.transform
        n, hdim = hidden.shape
        sdtype = log_z.dtype
        g_logp = g_logp.to(sdtype) if g_logp is not None else None
        g_ent = g_ent.to(sdtype) if g_ent is not None else None

        if ctx.grad_in_forward and g_ent is None:
            # frozen head: dlogp_i/dh_i = c_iy W_y - sum_v c_iv p_iv W_v, the sum precomputed in the forward
            with gathered(weight, bias):
                w_rows = weight.index_select(0, targets).to(ctx.autocast_dtype).to(sdtype)
            chain = transform.chain(target_z)
            w_rows = w_rows * (chain.unsqueeze(1) if torch.is_tensor(chain) else chain)
            return ((w_rows - acc_a) * g_logp.unsqueeze(1)).to(hidden.dtype), *none[1:]

        grad_hidden = grad_weight = grad_bias = None
        with gathered(weight, bias), torch.autocast(weight.device.type, dtype=ctx.autocast_dtype,
                                                     enabled=ctx.autocast_dtype != weight.dtype):
            plan = _Plan(n, hdim, weight, ctx.chunk)
            vocab, device = weight.shape[0], hidden.device
            # the forward's tile holds the logits when they all fit in one; it is overwritten with gradients here,
            # so a second backward (retain_graph=True) recomputes instead
            saved_tile, ctx.saved_tile = ctx.saved_tile, None
            use_saved = saved_tile is not None
            if needs_h:
                grad_hidden = torch.zeros(n, hdim, device=device, dtype=sdtype)
            if needs_w:
                grad_weight = torch.empty(weight.shape, device=device, dtype=weight.dtype)
            if needs_b:
                grad_bias = torch.zeros(vocab, device=device, dtype=sdtype)
            tile_buf = saved_tile if use_saved else torch.empty(
                min(n, plan.token_block) * min(vocab, plan.vocab_block), device=device, dtype=plan.gemm
            )
            h_all = plan.tokens(hidden)
            # tokens split into blocks: each vocabulary block's weight gradient sums over them in fp32
            dw_acc = None
            if grad_weight is not None and plan.split:
                dw_acc = torch.empty(min(vocab, plan.vocab_block), hdim, device=device, dtype=sdtype)
            for v0 in range(0, vocab, plan.vocab_block):
                v1 = min(vocab, v0 + plan.vocab_block)
                w_blk = None  # drop the previous block before the next fp32 copy exists
                w_blk = plan.block(weight[v0:v1])
                for t0 in range(0, n, plan.token_block):
                    t1 = min(n, t0 + plan.token_block)
                    h_blk, tgt_blk = h_all[t0:t1], targets[t0:t1]
                    tile = tile_buf[: (t1 - t0) * (v1 - v0)].view(t1 - t0, v1 - v0)
                    if not use_saved:
                        torch.mm(h_blk, w_blk.t(), out=tile)
                        if bias is not None:
                            tile.add_(bias[v0:v1].to(plan.compute).to(plan.gemm))
                    rows = slice(t0, t1)
                    _fold_backward(
                        tile, tgt_blk - v0, log_z[rows], transform, plan,
                        g_logp=None if g_logp is None else g_logp[rows],
                        g_ent=None if g_ent is None else g_ent[rows],
                        entropy=None if g_ent is None else entropy[rows],
                        grad_bias=None if grad_bias is None else grad_bias[v0:v1],
                    )
                    if grad_hidden is not None:
                        _mm_accumulate(grad_hidden[t0:t1], tile, w_blk)
                    if dw_acc is not None:
                        acc = dw_acc[: v1 - v0]
                        if t0 == 0:
                            acc.zero_()
                        _mm_accumulate(acc, tile.t(), h_blk)
                    elif grad_weight is not None:
                        _weight_grad_block(grad_weight[v0:v1], tile, h_blk, w_buf=w_blk)
                if dw_acc is not None:
                    grad_weight[v0:v1].copy_(dw_acc[: v1 - v0])
        return (
            grad_hidden.to(hidden.dtype) if grad_hidden is not None else None,
            grad_weight,
            grad_bias.to(bias.dtype) if grad_bias is not None else None,
            *none[3:],
        )


def _weight_grad_block(out: torch.Tensor, grad_tile: torch.Tensor, h_blk: torch.Tensor, *, w_buf: torch.Tensor) -> None:
    """``out = grad_tile.T @ h_blk``: one GEMM over every token of the call, rounded to ``out.dtype`` once.

    In upcast mode (``grad_tile`` fp32, ``out`` bf16) the fp32 product goes through ``w_buf`` (the block's fp32
    weight copy, no longer needed) instead of a new ``[Cv, H]`` allocation.
    """
    if grad_tile.dtype == out.dtype:
        torch.mm(grad_tile.t(), h_blk, out=out)
        return
    if w_buf.dtype == grad_tile.dtype and w_buf.shape == out.shape and w_buf._base is None:
        buf = w_buf
    else:
        buf = torch.empty(out.shape, device=out.device, dtype=grad_tile.dtype)
    torch.mm(grad_tile.t(), h_blk, out=buf)
    out.copy_(buf)


def chunked_logprobs(
    hidden: torch.Tensor,
    weight: torch.Tensor,
    targets: torch.Tensor,
    *,
    bias: torch.Tensor | None = None,
    temperature: float = 1.0,
    logit_scale: float = 1.0,
    softcap: float | None = None,
    ignore_index: int = -100,
    chunk: int | None = None,
    outputs: Sequence[str] = ("logp",),
    backward: str = "auto",
) -> dict[str, torch.Tensor]:
    """Per-token statistics of the next-token distribution ``softmax(f(hidden @ weight.T + bias))``.

    ``f(z) = softcap * tanh(z * logit_scale / softcap) / temperature`` (without ``softcap``: ``z * logit_scale /
    temperature``), i.e. Cohere/Granite ``logit_scale``, then Gemma's final-logit soft-capping, then the sampling
    temperature -- the order TRL 1.16's fused LM head uses.

    Args:
        hidden: ``[N, H]`` hidden states (any leading shape ``[..., H]`` is accepted and flattened; the outputs then
            have the shape of ``targets``).
        weight: ``[V, H]`` LM-head weight. The projection runs in ``weight.dtype`` (or the autocast dtype when
            autocast is on); ``hidden`` is cast to it.
        targets: ``[N]`` target token ids; ``ignore_index`` marks positions to skip.
        bias: optional ``[V]`` LM-head bias.
        temperature, logit_scale, softcap: see above.
        ignore_index: target value of positions that are skipped; every output is 0 there and gets no gradient.
        chunk: tile budget, in tokens of full-vocabulary logits (default 256): the engine's tiles (and fp32 block
            copies) take at most ``chunk * V * b`` bytes (``b`` = bytes of the weight's dtype), plus a ~4 MiB fp32
            scratch and ``O(N * H)`` buffers.
        outputs: which statistics to return, any of :data:`LOGPROB_OUTPUTS`:
            ``"logp"`` log-prob of the target; ``"entropy"`` entropy of the distribution (nats);
            ``"argmax_correct"`` 1.0 where the target is the first argmax; ``"mean_logit"`` mean over the vocabulary
            of the transformed logits; ``"logsumsq"`` ``log(sum_v p_v^2)`` (WPO's weight is ``exp(logp - logsumsq)``).
        backward: ``"auto"`` (default), ``"recompute"`` or ``"forward"``: with a frozen head (only ``hidden``
            requires grad), whether the forward precomputes the hidden-state gradient (``auto`` does) or the backward
            recomputes the tiles. A trainable head always recomputes.

    Returns:
        ``{name: tensor of targets' shape}`` for every requested name, float32 (float64 for float64 inputs). ``logp``
        and ``entropy`` carry gradients to ``hidden``, ``weight`` and ``bias`` (only to those that require grad).
    """
    outputs = tuple(dict.fromkeys(outputs))
    unknown = set(outputs) - set(LOGPROB_OUTPUTS)
    if unknown or not outputs:
        raise ValueError(f"outputs must be a non-empty subset of {LOGPROB_OUTPUTS}, got {outputs}")
    if backward not in ("auto", "recompute", "forward"):
        raise ValueError(f"backward must be 'auto', 'recompute' or 'forward', got {backward!r}")
    if hidden.shape[:-1] != targets.shape:
        raise ValueError(f"hidden {tuple(hidden.shape)} and targets {tuple(targets.shape)} disagree")
    out_shape = targets.shape
    flat_h = hidden.reshape(-1, hidden.shape[-1])
    flat_t = targets.reshape(-1)
    if weight.numel() and weight.shape[1] != flat_h.shape[1]:
        raise ValueError(f"weight {tuple(weight.shape)} does not match hidden size {flat_h.shape[1]}")
    transform = _Transform(logit_scale, softcap, temperature)
    valid = flat_t != ignore_index
    idx = None
    h_valid, t_valid = flat_h, flat_t
    if not bool(valid.all()):
        idx = valid.nonzero().squeeze(1)
        h_valid, t_valid = flat_h.index_select(0, idx), flat_t.index_select(0, idx)
    if t_valid.numel() == 0:
        # nothing to compute; keep the graph connected so that backward yields zero gradients
        zero = (flat_h.sum() + weight.sum() + (bias.sum() if bias is not None else 0.0)) * 0.0
        dtype = _stat_dtype(_compute_dtype(weight))
        return {
            k: torch.zeros(out_shape, device=hidden.device, dtype=dtype)
            + (zero.to(dtype) if k in ("logp", "entropy") else 0.0)
            for k in outputs
        }
    values = _LogProbFunction.apply(h_valid, weight, bias, t_valid, transform, chunk, outputs, backward)
    result = {}
    for name, value in zip(outputs, values, strict=True):
        if idx is not None:
            value = torch.zeros(flat_t.shape, device=value.device, dtype=value.dtype).index_put((idx,), value)
        result[name] = value.reshape(out_shape)
    return result


# ------------------------------------------------------------------------------------------------------------------
# divergence


def _divergence_tiles(n: int, hs_dim: int, ht_dim: int, ws: torch.Tensor, chunk: int | None) -> tuple[int, int]:
    """``(token_block, vocab_block)`` for two fp32 tiles (student, teacher) sharing the ``chunk * V * b`` budget with
    the upcast ``[Cv, H]`` weight blocks (where the GEMM cannot write fp32 from bf16 operands, i.e. off CUDA); all
    tokens in one block unless that leaves fewer than ``_MIN_VOCAB_BLOCK`` columns (see :class:`_Plan`)."""
    chunk = DEFAULT_CHUNK if chunk is None else int(chunk)
    if chunk <= 0:
        raise ValueError(f"chunk must be positive, got {chunk}")
    vocab = ws.shape[0]
    budget = max(1, chunk * vocab * ws.element_size())
    upcast = ws.device.type != "cuda" and ws.dtype not in (torch.float32, torch.float64)
    row_bytes = 4 * ((hs_dim + ht_dim) if upcast else 0) + 4 * hs_dim  # + the fp32 dW accumulator when split
    min_vb = min(vocab, _MIN_VOCAB_BLOCK)
    token_block = n if budget // (8 * n + row_bytes) >= min_vb else max(1, min(n, (budget // min_vb - row_bytes) // 8))
    vocab_block = max(1, min(vocab, budget // (8 * token_block + row_bytes)))
    return token_block, vocab_block


def _project_fp32(h: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None, out: torch.Tensor) -> torch.Tensor:
    """``out (fp32) = h @ w.T (+ b)`` without rounding the logits to bf16: ``out_dtype`` GEMM on CUDA; elsewhere
    this block's operands are upcast (a ``[Cv, H]`` block copy, never the whole weight)."""
    if h.dtype == w.dtype == out.dtype:
        torch.mm(h, w.t(), out=out)
    elif out.device.type == "cuda" and h.dtype == w.dtype and h.dtype in (torch.bfloat16, torch.float16):
        torch.mm(h, w.t(), out_dtype=out.dtype, out=out)
    else:
        torch.mm(h.to(out.dtype), w.to(out.dtype).t(), out=out)
    if b is not None:
        out.add_(b.to(out.dtype))
    return out


class _DivergenceFunction(torch.autograd.Function):
    """Per-token forward KL / reverse KL / generalised JSD between student and teacher heads; student grads only."""

    @staticmethod
    def forward(ctx, hs, ws, bs, ht, wt, bt, beta, t_student, t_teacher, chunk):
        ctx.set_materialize_grads(False)
        n = hs.shape[0]
        with gathered(ws, bs, wt, bt):
            vocab = ws.shape[0]
            cs, ct = _compute_dtype(ws), _compute_dtype(wt)
            sdtype = _stat_dtype(cs)
            token_block, vocab_block = _divergence_tiles(n, hs.shape[1], ht.shape[1], ws, chunk)
            dev = hs.device
            mode = 0 if beta == 0.0 else 1 if beta == 1.0 else 2

            def stat(fill: float = 0.0) -> torch.Tensor:
                return torch.full((n,), fill, device=dev, dtype=sdtype)

            m_s, m_t, s_s, s_t = stat(-math.inf), stat(-math.inf), stat(), stat()
            x_s = stat()  # sum_v e_s * z_s (entropy)
            gap = stat()  # sum_v e_t (z_t - z_s) (forward KL) or e_s (z_s - z_t) (reverse KL)
            buf_s = torch.empty(min(n, token_block) * min(vocab, vocab_block), device=dev, dtype=sdtype)
            buf_t = torch.empty_like(buf_s)

            def tiles(hs_blk, ht_blk, t0, t1, v0, v1):
                ts = buf_s[: (t1 - t0) * (v1 - v0)].view(t1 - t0, v1 - v0)
                tt = buf_t[: (t1 - t0) * (v1 - v0)].view(t1 - t0, v1 - v0)
                _project_fp32(hs_blk, ws[v0:v1].to(cs), None if bs is None else bs[v0:v1], ts)
                _project_fp32(ht_blk, wt[v0:v1].to(ct), None if bt is None else bt[v0:v1], tt)
                return t_student.forward(ts, sdtype, copy=False), t_teacher.forward(tt, sdtype, copy=False)

            hs_c, ht_c = hs.to(cs), ht.to(ct)
            for v0 in range(0, vocab, vocab_block):
                v1 = min(vocab, v0 + vocab_block)
                for t0 in range(0, n, token_block):
                    t1 = min(n, t0 + token_block)
                    rows = slice(t0, t1)
                    zs, zt = tiles(hs_c[t0:t1], ht_c[t0:t1], t0, t1, v0, v1)
                    new_s = torch.maximum(m_s[rows], zs.amax(1))
                    new_t = torch.maximum(m_t[rows], zt.amax(1))
                    rs, rt = torch.exp(m_s[rows] - new_s), torch.exp(m_t[rows] - new_t)
                    es = torch.exp(zs - new_s.unsqueeze(1))
                    s_s[rows] = s_s[rows] * rs + es.sum(1)
                    x_s[rows] = x_s[rows] * rs + torch.linalg.vecdot(es, zs)
                    if mode == 1:
                        gap[rows] = gap[rows] * rs + torch.linalg.vecdot(es, zs - zt)
                    del es
                    et = torch.exp(zt - new_t.unsqueeze(1))
                    s_t[rows] = s_t[rows] * rt + et.sum(1)
                    if mode == 0:
                        gap[rows] = gap[rows] * rt + torch.linalg.vecdot(et, zt.sub_(zs))
                    del et
                    m_s[rows], m_t[rows] = new_s, new_t
            lz_s = m_s + torch.log(s_s)
            lz_t = m_t + torch.log(s_t)
            entropy = lz_s - x_s / s_s
            if mode == 0:  # KL(p_t || p_s) = sum_v p_t (z_t - z_s) - lz_t + lz_s
                div = gap / s_t - lz_t + lz_s
                aux = div
            elif mode == 1:  # KL(p_s || p_t)
                div = gap / s_s - lz_s + lz_t
                aux = div
            else:  # generalised JSD: a second pass, the mixture needs both normalisers
                div, kl_s = stat(), stat()
                lb, l1b = math.log(beta), math.log1p(-beta)
                for v0 in range(0, vocab, vocab_block):
                    v1 = min(vocab, v0 + vocab_block)
                    for t0 in range(0, n, token_block):
                        t1 = min(n, t0 + token_block)
                        rows = slice(t0, t1)
                        zs, zt = tiles(hs_c[t0:t1], ht_c[t0:t1], t0, t1, v0, v1)
                        lps = zs.sub_(lz_s[rows].unsqueeze(1))
                        lpt = zt.sub_(lz_t[rows].unsqueeze(1))
                        log_m = torch.logaddexp(lps + l1b, lpt + lb)
                        kls = torch.linalg.vecdot(torch.exp(lps), lps - log_m)
                        klt = torch.linalg.vecdot(torch.exp(lpt), lpt - log_m)
                        div[rows] += beta * klt + (1 - beta) * kls
                        kl_s[rows] += kls
                aux = kl_s
        ctx.save_for_backward(hs, ws, bs, ht, wt, bt, lz_s, lz_t, aux)
        ctx.beta, ctx.mode, ctx.chunk = beta, mode, chunk
        ctx.t_student, ctx.t_teacher = t_student, t_teacher
        ctx.dtypes = (cs, ct)
        ctx.mark_non_differentiable(entropy)
        return div, entropy

    @staticmethod
    def backward(ctx, g_div, _g_entropy):
        hs, ws, bs, ht, wt, bt, lz_s, lz_t, aux = ctx.saved_tensors
        needs_h, needs_w, needs_b = ctx.needs_input_grad[:3]
        if g_div is None or not (needs_h or needs_w or needs_b):
            return (None,) * 10
        n, hdim = hs.shape
        beta, mode = ctx.beta, ctx.mode
        cs, ct = ctx.dtypes
        sdtype = lz_s.dtype
        g = g_div.to(sdtype)
        with gathered(ws, bs, wt, bt):
            vocab = ws.shape[0]
            token_block, vocab_block = _divergence_tiles(n, hs.shape[1], ht.shape[1], ws, ctx.chunk)
            dev = hs.device
            grad_h = torch.zeros(n, hdim, device=dev, dtype=sdtype) if needs_h else None
            grad_w = torch.empty(ws.shape, device=dev, dtype=ws.dtype) if needs_w else None
            grad_b = torch.zeros(vocab, device=dev, dtype=sdtype) if needs_b else None
            buf_s = torch.empty(min(n, token_block) * min(vocab, vocab_block), device=dev, dtype=sdtype)
            buf_t = torch.empty_like(buf_s)
            lb, l1b = (math.log(beta), math.log1p(-beta)) if mode == 2 else (0.0, 0.0)
            # the gradient GEMMs run where the projection did: fp32 operands on CPU, the compute dtype on CUDA
            gdtype = cs if hs.device.type == "cuda" else sdtype
            hs_c, ht_c = hs.to(cs), ht.to(ct)
            hs_g = hs_c.to(gdtype)
            split = token_block < n
            dw_acc = torch.empty(min(vocab, vocab_block), hdim, device=dev, dtype=sdtype) if needs_w and split else None
            for v0 in range(0, vocab, vocab_block):
                v1 = min(vocab, v0 + vocab_block)
                w_blk = wg = None  # drop the previous block before the next copy exists
                w_blk = ws[v0:v1].to(cs)
                wg = w_blk.to(gdtype)
                for t0 in range(0, n, token_block):
                    t1 = min(n, t0 + token_block)
                    rows = slice(t0, t1)
                    hs_blk, ht_blk = hs_c[t0:t1], ht_c[t0:t1]
                    ts = buf_s[: (t1 - t0) * (v1 - v0)].view(t1 - t0, v1 - v0)
                    tt = buf_t[: (t1 - t0) * (v1 - v0)].view(t1 - t0, v1 - v0)
                    _project_fp32(hs_blk, w_blk, None if bs is None else bs[v0:v1], ts)
                    _project_fp32(ht_blk, wt[v0:v1].to(ct), None if bt is None else bt[v0:v1], tt)
                    zs = ctx.t_student.forward(ts, sdtype, copy=False)
                    chain = ctx.t_student.chain(zs)
                    lps = zs.sub_(lz_s[rows].unsqueeze(1))
                    lpt = ctx.t_teacher.forward(tt, sdtype, copy=False).sub_(lz_t[rows].unsqueeze(1))
                    if mode == 0:  # d/dz_s KL(t || s) = p_s - p_t
                        grad = lpt.exp_().neg_().add_(torch.exp(lps))
                    elif mode == 1:  # p_s (log p_s - log p_t - KL)
                        grad = lpt.neg_().add_(lps).sub_(aux[rows].unsqueeze(1)).mul_(torch.exp(lps))
                    else:  # (1 - beta) p_s (log p_s - log m - KL(p_s || m))
                        log_m = torch.logaddexp(lps + l1b, lpt + lb)
                        grad = log_m.neg_().add_(lps).sub_(aux[rows].unsqueeze(1)).mul_(torch.exp(lps))
                        grad.mul_(1 - beta)
                    grad.mul_(g[rows].unsqueeze(1))
                    if not isinstance(chain, float) or chain != 1.0:
                        grad.mul_(chain)
                    if grad_b is not None:
                        grad_b[v0:v1] += grad.sum(0)
                    gc = grad.to(gdtype)
                    if grad_h is not None:
                        _mm_accumulate(grad_h[t0:t1], gc, wg)
                    if dw_acc is not None:
                        acc = dw_acc[: v1 - v0]
                        if t0 == 0:
                            acc.zero_()
                        _mm_accumulate(acc, gc.t(), hs_g[t0:t1])
                    elif grad_w is not None:
                        _weight_grad_block(grad_w[v0:v1], gc, hs_g, w_buf=wg)
                if dw_acc is not None:
                    grad_w[v0:v1].copy_(dw_acc[: v1 - v0])
        return (
            grad_h.to(hs.dtype) if grad_h is not None else None,
            grad_w,
            grad_b.to(bs.dtype) if grad_b is not None else None,
            *(None,) * 7,
        )


def chunked_divergence(
    student_hidden: torch.Tensor,
    student_weight: torch.Tensor,
    teacher_hidden: torch.Tensor,
    teacher_weight: torch.Tensor,
    *,
    beta: float = 0.5,
    temperature: float = 1.0,
    mask: torch.Tensor | None = None,
    student_bias: torch.Tensor | None = None,
    teacher_bias: torch.Tensor | None = None,
    student_logit_scale: float = 1.0,
    teacher_logit_scale: float = 1.0,
    student_softcap: float | None = None,
    teacher_softcap: float | None = None,
    chunk: int | None = None,
    outputs: Sequence[str] = ("divergence",),
) -> dict[str, torch.Tensor]:
    """Per-token divergence between a student's and a teacher's next-token distributions, from their hidden states.

    ``beta = 0``: forward KL ``KL(p_teacher || p_student)``; ``beta = 1``: reverse KL ``KL(p_student || p_teacher)``;
    otherwise the generalised JSD ``beta * KL(p_t || m) + (1 - beta) * KL(p_s || m)`` with the mixture
    ``m = (1 - beta) * p_s + beta * p_t`` (TRL's ``generalized_jsd_loss`` / ``ChunkedDivergenceFunction`` convention).
    Each model's logits are transformed like in :func:`chunked_logprobs` with its own scale and softcap, then both are
    divided by ``temperature``. Unlike :func:`chunked_logprobs`, the projection *output* is fp32 (an ``out_dtype``
    GEMM on CUDA, upcast ``[Cv, H]`` blocks elsewhere): a divergence between two close distributions is a difference of
    nearly equal logits, which bf16 rounding of the logits would swamp.

    Args:
        student_hidden: ``[N, H_s]`` (or ``[..., H_s]``); student_weight: ``[V, H_s]``.
        teacher_hidden: ``[N, H_t]``; teacher_weight: ``[V, H_t]``. The teacher never receives a gradient.
        mask: optional ``[N]`` bool/0-1 tensor of positions to compute; the others are skipped and return 0.
        chunk: tile budget as in :func:`chunked_logprobs`.
        outputs: any of :data:`DIVERGENCE_OUTPUTS`: ``"divergence"`` (nats, differentiable w.r.t. the student) and
            ``"entropy"`` (the student's entropy, no gradient).

    Returns:
        ``{name: float32 tensor of the mask's shape}``.
    """
    outputs = tuple(dict.fromkeys(outputs))
    unknown = set(outputs) - set(DIVERGENCE_OUTPUTS)
    if unknown or not outputs:
        raise ValueError(f"outputs must be a non-empty subset of {DIVERGENCE_OUTPUTS}, got {outputs}")
    if not 0.0 <= beta <= 1.0:
        raise ValueError(f"beta must lie in [0, 1], got {beta}")
    if student_weight.shape[0] != teacher_weight.shape[0]:
        raise ValueError(
            f"student vocabulary {student_weight.shape[0]} != teacher vocabulary {teacher_weight.shape[0]}"
        )
    out_shape = student_hidden.shape[:-1]
    hs = student_hidden.reshape(-1, student_hidden.shape[-1])
    ht = teacher_hidden.reshape(-1, teacher_hidden.shape[-1])
    if ht.shape[0] != hs.shape[0]:
        raise ValueError(f"student has {hs.shape[0]} positions, teacher {ht.shape[0]}")
    idx = None
    if mask is not None:
        valid = mask.reshape(-1) != 0
        if not bool(valid.all()):
            idx = valid.nonzero().squeeze(1)
            hs, ht = hs.index_select(0, idx), ht.index_select(0, idx)
    n_total = out_shape.numel()
    if hs.shape[0] == 0:
        zero = student_hidden.sum() * 0.0 + student_weight.sum() * 0.0
        return {k: torch.zeros(out_shape, device=student_hidden.device) + zero.float() for k in outputs}
    ts = _Transform(student_logit_scale, student_softcap, temperature)
    tt = _Transform(teacher_logit_scale, teacher_softcap, temperature)
    div, ent = _DivergenceFunction.apply(
        hs, student_weight, student_bias, ht.detach(), teacher_weight.detach(),
        None if teacher_bias is None else teacher_bias.detach(), float(beta), ts, tt, chunk,
    )
    result = {}
    for name, value in (("divergence", div), ("entropy", ent)):
        if name not in outputs:
            continue
        if idx is not None:
            value = torch.zeros(n_total, device=value.device, dtype=value.dtype).index_put((idx,), value)
        result[name] = value.reshape(out_shape)
    return result
