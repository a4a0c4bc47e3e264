"""``python -m reference_impl.bench``: the chunked LM-head loss against its anchors, side by side in one run.

Every variant computes the mean next-token NLL of ``h [N, H] @ W.T [H, V]`` forward and backward, each in a fresh
subprocess (so one variant's allocator state cannot flatter another's): time = median over repeats after one cold
run; memory = peak over the inputs (CPU: ``ru_maxrss`` minus the RSS once the inputs exist, inputs built block-wise
so building them never sets the high-water mark; CUDA: ``torch.cuda.max_memory_allocated`` minus the inputs).

Variants: ``naive`` (full logits, fp32 softmax), ``fp32_upcast`` (the pre-TRL-1.13 chunk: both operands upcast to
fp32 per 256-token chunk, checkpointed -- an emulation of the bug TRL PR #6863 fixed), ``trl113`` (TRL 1.13's
``sft_trainer._chunked_cross_entropy_loss``, imported from an installed TRL 1.13 or an unpacked 1.13 wheel on
``sys.path`` -- never copied), ``trl116`` (TRL 1.16's ``trl.kernels.ChunkedLogProbFunction``), ``torch_lce``
(``torch.nn.functional.linear_cross_entropy`` with ``LinearCrossEntropyOptions()``), ``liger`` (Liger's chunked
selective log-prob function, when importable), ``liger_flce`` (Liger's Triton ``LigerFusedLinearCrossEntropyLoss``,
CUDA), ``cce`` (Apple's ``cut_cross_entropy.linear_cross_entropy``, default ``impl="cce"`` with its gradient filter,
CUDA), ``ours`` (:func:`reference_impl.chunking.chunked_logprobs`; on CUDA with the Triton fold when triton imports),
``ours_scalar`` (:func:`reference_impl.scalar_loss.chunked_scalar_loss`, the 3-GEMM path with gradients in the
forward; ``path="auto"``), plus ``ours_torchfold`` (CUDA: the engine with the torch fold, ``REFERENCE_IMPL_FOLD=torch``),
``ours_recompute`` (frozen head: backward recomputes instead of grad-in-forward) and ``ours_native`` (CPU: GEMMs in
bf16 even without hardware bf16) to show the measurements behind the engine's choices.

``--precision`` instead measures, in one process, the relative error of the loss, ``dh`` and ``dW`` of ``naive``,
``ours``, ``ours_scalar`` and the forced 3-GEMM path (``ours_scalar_forced``) against float64 on the same inputs.

The table gives each variant's ratio to ``ours`` and to the tiled floor ``V*H*b + N*H*b + C*V*(b+4)`` (``C`` = 256;
``C*V*b`` when all ``N <= C`` tokens are one chunk; no ``V*H*b`` with a frozen head). A variant that does not finish
within its share of ``--budget`` is reported as a timeout; the whole run stays under the budget.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

SHAPES = {
    "s1": (2048, 1024, 32000),
    "s2": (1024, 1024, 128000),
    "s3": (256, 2048, 248320),
}
VARIANTS = [
    "naive", "fp32_upcast", "trl113", "trl116", "torch_lce", "liger", "liger_flce", "cce",
    "ours", "ours_scalar", "ours_torchfold", "ours_recompute", "ours_native",
]
# CUDA-only variants (Triton kernels that need a GPU driver)
CUDA_ONLY = {"liger_flce", "cce", "ours_torchfold"}
CHUNK = 256
# where to find TRL 1.13 when it is not the installed trl: an unpacked wheel (never copied into this project)
TRL113_PATHS = [p for p in (os.environ.get("REFERENCE_IMPL_TRL113_PATH"), "/tmp/wheels/trl-1.13.0") if p]


# ------------------------------------------------------------------------------------------------------------------
# worker (runs in its own process)


def _rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _loss_fn(variant: str, device: str):
    import torch
    import torch.nn.functional as F

    if variant == "naive":
        return lambda h, w, t: F.cross_entropy((h @ w.t()).float(), t)
    if variant == "fp32_upcast":
        from torch.utils.checkpoint import checkpoint

        def chunk_loss(hc, w, tc):
            return F.cross_entropy(hc.float() @ w.float().t(), tc, reduction="sum")

        def fp32_upcast(h, w, t):
            total = sum(
                checkpoint(chunk_loss, h[i : i + CHUNK], w, t[i : i + CHUNK], use_reentrant=False)
                for i in range(0, h.shape[0], CHUNK)
            )
            return total / t.numel()

        return fp32_upcast
    if variant == "trl113":
        try:
            import trl

            if not trl.__version__.startswith("1.13"):
                raise ImportError
        except ImportError:
            for key in [k for k in sys.modules if k == "trl" or k.startswith("trl.")]:
                del sys.modules[key]
            sys.path[:0] = [p for p in TRL113_PATHS if Path(p).is_dir()]
        import trl
        from trl.trainer.sft_trainer import _chunked_cross_entropy_loss

        if not trl.__version__.startswith("1.13"):
            raise ImportError(f"TRL 1.13 not found (got {trl.__version__})")

        def trl113(h, w, t):
            return _chunked_cross_entropy_loss(h.unsqueeze(0), w, CHUNK, shift_labels=t.unsqueeze(0))[0]

        return trl113
    if variant == "trl116":
        import trl
        from trl.kernels import ChunkedLogProbFunction

        if not trl.__version__.startswith("1.16"):
            raise ImportError(f"TRL 1.16 not installed (got {trl.__version__})")

        def trl116(h, w, t):
            logp = ChunkedLogProbFunction.apply(h, w, None, t, 1.0, 32768, None, 1.0, ())[0]
            return -logp.mean()

        return trl116
    if variant == "torch_lce":
        from torch.nn import LinearCrossEntropyOptions

        opts = LinearCrossEntropyOptions()
        return lambda h, w, t: F.linear_cross_entropy(h, w, t, options=opts).float()
    if variant == "liger":
        from liger_kernel.chunked_loss.fused_linear_ppo import _ChunkedSelectiveLogProbFunction  # noqa: F401

        def liger(h, w, t):
            return -_ChunkedSelectiveLogProbFunction.apply(h, w, t, None, 1.0, 4096).mean()

        return liger
    if variant == "liger_flce":
        from liger_kernel.transformers import LigerFusedLinearCrossEntropyLoss

        flce = LigerFusedLinearCrossEntropyLoss()
        return lambda h, w, t: flce(w, h, t).float()
    if variant == "cce":
        from cut_cross_entropy import linear_cross_entropy

        return lambda h, w, t: linear_cross_entropy(h, w, t).float()
    if variant.startswith("ours_scalar"):
        from reference_impl.scalar_loss import chunked_scalar_loss

        path = "scalar" if variant == "ours_scalar_forced" else "auto"
        return lambda h, w, t: chunked_scalar_loss(h, w, t, chunk=CHUNK, path=path)[0]
    if variant.startswith("ours"):
        from reference_impl.chunking import chunked_logprobs

        backward = "recompute" if variant == "ours_recompute" else "auto"
        return lambda h, w, t: -chunked_logprobs(h, w, t, chunk=CHUNK, backward=backward)["logp"].mean()
    raise ValueError(variant)


def worker(spec: dict) -> dict:
    if spec["variant"] == "ours_native":
        os.environ["REFERENCE_IMPL_CPU_GEMM"] = "native"
    if spec["variant"] == "ours_torchfold":
        os.environ["REFERENCE_IMPL_FOLD"] = "torch"
    import torch

    torch.manual_seed(0)
    n, hdim, vocab = spec["shape"]
    dtype = {"bf16": torch.bfloat16, "fp32": torch.float32}[spec["dtype"]]
    device = spec["device"]
    fn = _loss_fn(spec["variant"], device)
    # inputs built block-wise so that building them never sets the memory high-water mark
    w = torch.empty(vocab, hdim, dtype=dtype, device=device)
    for i in range(0, vocab, 4096):
        w[i : i + 4096] = torch.randn(min(4096, vocab - i), hdim, device=device).mul_(0.02)
    h = torch.randn(n, hdim, device=device).to(dtype)
    t = torch.randint(0, vocab, (n,), device=device)
    h.requires_grad_()
    w.requires_grad_(spec["head"] == "trainable")
    # initialise the GEMM / softmax libraries (thread pools, oneDNN kernels) before the baseline is read
    a = torch.randn(64, 64, device=device, dtype=dtype, requires_grad=True)
    F_ = torch.nn.functional
    F_.cross_entropy((a @ a.t()).float(), torch.zeros(64, dtype=torch.long, device=device)).backward()
    (a.float() @ a.float().t()).sum()
    del a

    def sync():
        if device == "cuda":
            torch.cuda.synchronize()

    if device == "cuda":
        sync()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
    else:
        base = _rss_mib()
    times, losses = [], []
    for it in range(spec["repeats"] + 1):
        h.grad = None
        w.grad = None
        sync()
        t0 = time.perf_counter()
        loss = fn(h, w, t)
        loss.backward()
        sync()
        times.append(time.perf_counter() - t0)
        losses.append(float(loss))
        del loss
        if it == 0 and times[0] > spec["max_iter_s"]:
            break  # one cold run already takes the variant's share: report it alone
    if device == "cuda":
        peak = (torch.cuda.max_memory_allocated() - base) / 2**20
    else:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - base
    timed = times[1:] or times
    return {
        **spec,
        "time_s": statistics.median(timed),
        "cold_s": times[0],
        "runs": len(timed),
        "peak_mib": peak,
        "loss": losses[-1],
    }


# ------------------------------------------------------------------------------------------------------------------
# driver


def floor_mib(n: int, hdim: int, vocab: int, dtype: str, head: str) -> float:
    b = 2 if dtype == "bf16" else 4
    tile = CHUNK * vocab * (b if n <= CHUNK else b + 4)
    return ((vocab * hdim * b if head == "trainable" else 0) + n * hdim * b + tile) / 2**20


def _machine() -> dict:
    import torch

    info = {"python": platform.python_version(), "torch": torch.__version__, "cpus": os.cpu_count()}
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
        model = next((line.split(":", 1)[1].strip() for line in text.splitlines() if "model name" in line), "?")
        flags = next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), [])
        info["cpu"] = model
        info["native_bf16"] = any(f in flags for f in ("avx512_bf16", "amx_bf16"))
    except OSError:
        pass
    info["loadavg_start"] = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    if torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name()
    return info


def _gemm_rates(device: str) -> dict:
    """GFLOP/s of a 512x1024x2048 GEMM per dtype: shows whether bf16 GEMMs are native on this machine."""
    import torch

    out = {}
    for name, dt in (("bf16", torch.bfloat16), ("fp32", torch.float32)):
        a = torch.randn(512, 1024, device=device, dtype=dt)
        b = torch.randn(2048, 1024, device=device, dtype=dt)
        a @ b.t()
        if device == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(3):
            a @ b.t()
        if device == "cuda":
            torch.cuda.synchronize()
        out[name] = round(3 * 2 * 512 * 1024 * 2048 / (time.perf_counter() - t0) / 1e9, 1)
    return out


def headline_dtype(device: str) -> str:
    """The dtype every anchor runs in: bf16, unless this CPU emulates bf16 GEMMs (then every bf16 anchor is 6-7x
    slower than its fp32 run and few finish in the budget), in which case fp32."""
    if device == "cuda":
        return "bf16"
    import torch

    from reference_impl.chunking import cpu_has_native_gemm

    return "bf16" if cpu_has_native_gemm(torch.bfloat16) else "fp32"


def plan(args) -> list[dict]:
    shapes = [s for s in args.shapes.split(",") if s]
    head_dtype = headline_dtype(args.device)
    specs = []
    scale = args.scale or (4 if args.quick else 1)
    for key in shapes:
        n, hdim, vocab = SHAPES[key]
        shape = (n // scale if key != "s3" else n, hdim, vocab // scale)
        for dtype in args.dtypes.split(","):
            for head in args.heads.split(","):
                full = dtype == head_dtype and head == "trainable"
                for variant in args.variants.split(","):
                    if variant == "ours_recompute" and head != "frozen":
                        continue
                    if variant == "ours_native" and (args.device != "cpu" or dtype != "bf16"):
                        continue
                    if variant in CUDA_ONLY and args.device != "cuda":
                        continue
                    # the full set of anchors on the headline configuration; the others compare the main ones
                    if not full and variant not in ("naive", "trl113", "ours", "ours_scalar", "ours_recompute"):
                        continue
                    specs.append(
                        {"shape_key": key, "shape": shape, "dtype": dtype, "head": head, "variant": variant,
                         "device": args.device, "repeats": args.repeats}
                    )
    # headline rows first so that a tight budget still fills them
    order = ["ours", "ours_scalar", "naive", "trl113", "trl116", "liger_flce", "cce", "ours_torchfold", "fp32_upcast",
             "torch_lce", "liger", "ours_recompute", "ours_native"]
    specs.sort(
        key=lambda s: (
            s["dtype"] != head_dtype or s["head"] != "trainable",
            shapes.index(s["shape_key"]),
            order.index(s["variant"]),
        )
    )
    return specs


def run(args, deadline: float) -> list[dict]:
    specs = plan(args)
    results = []
    for i, spec in enumerate(specs):
        remaining = deadline - time.monotonic()
        share = max(10.0, min(args.max_variant_s, remaining / max(1, len(specs) - i) * 2))
        if remaining < 10:
            results.append({**spec, "status": "skipped (budget)"})
            continue
        spec = {**spec, "max_iter_s": share / 3}
        cmd = [sys.executable, "-m", "reference_impl.bench", "--worker", json.dumps(spec)]
        env = {**os.environ, "PYTHONWARNINGS": "ignore"}
        try:
            # the share is for the measured runs; interpreter start and imports get a fixed allowance on top
            limit = min(share + 45, remaining)
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=limit, env=env)
            if proc.returncode == 0:
                results.append({**json.loads(proc.stdout.strip().splitlines()[-1]), "status": "ok"})
            else:
                err = (proc.stderr.strip().splitlines() or ["?"])[-1][:120]
                results.append({**spec, "status": f"error: {err}"})
        except subprocess.TimeoutExpired:
            results.append({**spec, "status": f"timeout (>{limit:.0f} s)"})
        r = results[-1]
        shown = f"{r['time_s']:.3f} s, {r['peak_mib']:.0f} MiB" if r["status"] == "ok" else r["status"]
        print(f"[{i + 1}/{len(specs)}] {spec['shape_key']} {spec['dtype']} {spec['head']:9s} {spec['variant']:14s} "
              f"{shown}", file=sys.stderr, flush=True)
    return results


def table(results: list[dict]) -> str:
    lines = []
    groups = {}
    for r in results:
        groups.setdefault((r["shape_key"], tuple(r["shape"]), r["dtype"], r["head"]), []).append(r)
    for (key, shape, dtype, head), rows in groups.items():
        n, hdim, vocab = shape
        fl = floor_mib(n, hdim, vocab, dtype, head)
        ours = next((r for r in rows if r["variant"] == "ours" and r.get("status") == "ok"), None)
        lines.append(f"\n**{key}: N {n} x H {hdim} x V {vocab}, {dtype}, head {head}** (tiled floor {fl:.0f} MiB)\n")
        lines.append("| variant | time s | time / ours | peak MiB | peak / ours | peak / floor |")
        lines.append("|---|---|---|---|---|---|")
        for r in rows:
            if r.get("status") != "ok":
                lines.append(f"| {r['variant']} | {r['status']} | | | | |")
                continue
            tr = f"{r['time_s'] / ours['time_s']:.2f}" if ours else "-"
            mr = f"{r['peak_mib'] / ours['peak_mib']:.2f}" if ours and ours["peak_mib"] > 0 else "-"
            lines.append(
                f"| {r['variant']} | {r['time_s']:.3f} | {tr} | {r['peak_mib']:.0f} | {mr} | {r['peak_mib'] / fl:.2f} |"
            )
    return "\n".join(lines)


def plot(results: list[dict], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    dtype = max(("bf16", "fp32"), key=lambda d: sum(r.get("status") == "ok" and r["dtype"] == d for r in results))
    rows = [r for r in results if r.get("status") == "ok" and r["dtype"] == dtype and r["head"] == "trainable"]
    keys = list(dict.fromkeys(r["shape_key"] for r in rows))
    if not keys:
        return False
    fig, axes = plt.subplots(2, len(keys), figsize=(5 * len(keys), 7), squeeze=False)
    for j, key in enumerate(keys):
        sub = [r for r in rows if r["shape_key"] == key]
        names = [r["variant"] for r in sub]
        colors = ["tab:green" if v.startswith("ours") else "tab:gray" for v in names]
        n, hdim, vocab = sub[0]["shape"]
        axes[0][j].barh(names, [r["time_s"] for r in sub], color=colors)
        axes[0][j].set_title(f"{key}: {n}x{hdim}x{vocab} {dtype}\nfwd+bwd time (s)")
        axes[1][j].barh(names, [r["peak_mib"] for r in sub], color=colors)
        axes[1][j].axvline(floor_mib(n, hdim, vocab, dtype, "trainable"), color="tab:red", ls="--", label="floor")
        axes[1][j].set_title("peak memory over inputs (MiB)")
        axes[1][j].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


PRECISION_VARIANTS = ["naive", "ours", "ours_scalar", "ours_scalar_forced"]


def precision(args) -> str:
    """Relative errors of loss, ``dh`` and ``dW`` against float64 on the same (rounded) inputs, every variant in
    this one process (the float64 reference is computed once per dtype). Head trainable."""
    import torch

    lines = ["| shape | dtype | variant | loss abs err | dh rel err | dW rel err | tokens / block |", "|---|---|---|---|---|---|---|"]
    scale = args.scale or (4 if args.quick else 1)
    for key in [k for k in args.shapes.split(",") if k]:
        n, hdim, vocab = SHAPES[key]
        shape = (n // scale if key != "s3" else n, hdim, vocab // scale)
        n, hdim, vocab = shape
        for dname in args.dtypes.split(","):
            dtype = {"bf16": torch.bfloat16, "fp32": torch.float32}[dname]
            torch.manual_seed(0)
            w = (torch.randn(vocab, hdim, device=args.device) * 0.02).to(dtype)
            h = torch.randn(n, hdim, device=args.device).to(dtype)
            t = torch.randint(0, vocab, (n,), device=args.device)
            hd, wd = h.double().requires_grad_(), w.double().requires_grad_()
            exact = torch.nn.functional.cross_entropy(hd @ wd.t(), t)
            exact.backward()
            ref = (exact.item(), hd.grad, wd.grad)
            del hd, wd, exact
            chosen = PRECISION_VARIANTS if args.variants == ",".join(VARIANTS) else args.variants.split(",")
            for variant in [v for v in chosen if v in PRECISION_VARIANTS]:
                fn = _loss_fn(variant, args.device)
                hv, wv = h.clone().requires_grad_(), w.clone().requires_grad_()
                loss = fn(hv, wv, t)
                loss.backward()

                def rel(a, b):
                    return ((a.double() - b).norm() / b.norm()).item()

                blocks = "-"
                if variant.startswith("ours_scalar"):
                    from reference_impl.scalar_loss import _TokenPlan, scalar_path_applies

                    tp = _TokenPlan(n, hdim, wv, CHUNK)
                    used = variant == "ours_scalar_forced" or scalar_path_applies(n, hv, wv, CHUNK)
                    blocks = f"{tp.token_block} ({tp.blocks} blocks, {'3-GEMM' if used else 'engine'})"
                lines.append(f"| {key} {n}x{hdim}x{vocab} | {dname} | {variant} | {abs(loss.item() - ref[0]):.2e} | "
                             f"{rel(hv.grad, ref[1]):.2e} | {rel(wv.grad, ref[2]):.2e} | {blocks} |")
                print(lines[-1], file=sys.stderr, flush=True)
                del hv, wv, loss
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m reference_impl.bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--quick", action="store_true", help="N and V divided by 4 (s3: V only), 1 timed repeat")
    p.add_argument("--scale", type=int, default=None, help="divide N and V by this (s3: V only); --quick means 4")
    p.add_argument("--shapes", default="s1,s2,s3")
    p.add_argument("--dtypes", default="bf16,fp32")
    p.add_argument("--heads", default="trainable,frozen")
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--repeats", type=int, default=None, help="timed repeats after the cold run (default 3, quick 1)")
    p.add_argument("--budget", type=float, default=None, help="seconds for the whole run (default: 540 CPU, 420 CUDA)")
    p.add_argument("--max-variant-s", type=float, default=None, help="cap per variant subprocess")
    p.add_argument("--out", type=Path, default=None, help="folder for results.json, table.md, bench.png")
    p.add_argument("--precision", action="store_true",
                   help="instead of timing: loss/dh/dW relative errors against float64 (default shape s1)")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return 0
    if args.precision:
        started = datetime.datetime.now(datetime.timezone.utc)
        command = "python -m reference_impl.bench " + " ".join(argv if argv is not None else sys.argv[1:])
        text = f"command: `{command}`  \ndate: {started:%Y-%m-%d %H:%M} UTC  \nmachine: {json.dumps(_machine())}\n\n"
        text += precision(args)
        print(text)
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / "precision.md").write_text(text + "\n")
        return 0
    args.repeats = args.repeats if args.repeats is not None else (1 if args.quick else 3)
    args.budget = args.budget if args.budget is not None else (540.0 if args.device == "cpu" else 420.0)
    args.max_variant_s = args.max_variant_s or (120.0 if args.device == "cpu" else 60.0)
    started = datetime.datetime.now(datetime.timezone.utc)
    deadline = time.monotonic() + args.budget
    machine = {**_machine(), "gemm_gflops": _gemm_rates(args.device)}
    results = run(args, deadline)
    command = "python -m reference_impl.bench " + " ".join(argv if argv is not None else sys.argv[1:])
    header = (
        f"command: `{command}`  \ndate: {started:%Y-%m-%d %H:%M} UTC  \nmachine: {json.dumps(machine)}  \n"
        f"wall: {(datetime.datetime.now(datetime.timezone.utc) - started).total_seconds():.0f} s"
    )
    text = header + "\n" + table(results)
    print(text)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "results.json").write_text(json.dumps({"machine": machine, "results": results}, indent=1))
        (args.out / "table.md").write_text(text + "\n")
        if plot(results, args.out / "bench.png"):
            print(f"plot: {args.out / 'bench.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
