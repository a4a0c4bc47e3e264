"""Device-side numerics of the chunked engine, run by ``benchmarks/gpu_bench.sh`` before the timing bench.

Prints, per dtype and head: the relative error of the loss (NLL + 0.1 entropy), ``dh`` and ``dW`` against float64 on
the same (rounded) inputs, for the engine with the Triton fold, the engine with the torch fold, naive full logits, and
the 3-GEMM scalar path (``chunked_scalar_loss``, NLL); then the divergence check. ``--small`` shrinks the shapes so the
same code runs on a CPU (``gpu_bench.sh`` dry mode; the Triton fold then needs ``TRITON_INTERPRET=1``).
"""

from __future__ import annotations

import argparse
import os

import torch

from reference_impl.chunking import chunked_divergence, chunked_logprobs
from reference_impl.kernels import triton_available
from reference_impl.scalar_loss import chunked_scalar_loss


def rel(a: torch.Tensor, b: torch.Tensor) -> float:
    return ((a.double() - b).norm() / b.norm()).item()


def logprob_checks(dev: str, n: int, h: int, v: int) -> None:
    torch.manual_seed(0)
    folds = (["triton"] if triton_available() else []) + ["torch"]
    for dtype in (torch.bfloat16, torch.float32):
        for head in ("trainable", "frozen"):
            x = torch.randn(n, h, device=dev).to(dtype)
            w = (torch.randn(v, h, device=dev) * 0.02).to(dtype)
            t = torch.randint(0, v, (n,), device=dev)
            t[::7] = -100
            m = t != -100

            def run(name: str, x=x, w=w, t=t, m=m, head=head):  # this iteration's inputs
                xx = x.detach().clone().double() if name.startswith("exact") else x.detach().clone()
                ww = w.detach().clone().double() if name.startswith("exact") else w.detach().clone()
                xx.requires_grad_()
                ww.requires_grad_(head == "trainable")
                if name.startswith("ours"):
                    os.environ["REFERENCE_IMPL_FOLD"] = name.split("_")[1]
                    out = chunked_logprobs(xx, ww, t, chunk=32, outputs=("logp", "entropy"))
                    loss = -out["logp"].sum() / m.sum() + 0.1 * out["entropy"].mean()
                elif name == "scalar":  # NLL only (the scalar path has no entropy gradient)
                    loss = chunked_scalar_loss(xx, ww, t, chunk=32)[0]
                else:
                    lp = torch.log_softmax((xx @ ww.t()).to(torch.float64 if name.startswith("exact") else torch.float32), -1)
                    logp = lp.gather(1, t.clamp(min=0)[:, None]).squeeze(1) * m
                    ent = -(lp.exp() * lp).sum(-1) * m
                    loss = -logp.sum() / m.sum() + (0.0 if name == "exact_nll" else 0.1 * ent.mean())
                loss.backward()
                return loss.double(), xx.grad.double(), None if ww.grad is None else ww.grad.double()

            names = ["exact", "exact_nll", "naive", *[f"ours_{f}" for f in folds], "scalar"]
            res = {name: run(name) for name in names}
            os.environ.pop("REFERENCE_IMPL_FOLD", None)
            line = [f"{dtype} {head}:"]
            for name in names[2:]:
                r, ex = res[name], res["exact_nll" if name == "scalar" else "exact"]
                line.append(f"{name} loss {abs(r[0] - ex[0]).item():.2e} dh {rel(r[1], ex[1]):.2e}"
                            + (f" dW {rel(r[2], ex[2]):.2e}" if r[2] is not None else ""))
            print("  ".join(line), flush=True)


def divergence_checks(dev: str, n: int, v: int) -> None:
    hs = torch.randn(n, 256, device=dev, requires_grad=True)
    ws = torch.randn(v, 256, device=dev) * 0.05
    ht = torch.randn(n, 384, device=dev)
    wt = torch.randn(v, 384, device=dev) * 0.05
    for beta in (0.0, 0.5, 1.0):
        d = chunked_divergence(hs.bfloat16(), ws.bfloat16(), ht.bfloat16(), wt.bfloat16(), beta=beta,
                               chunk=16)["divergence"]
        ls = torch.log_softmax(hs.bfloat16().double() @ ws.bfloat16().double().t(), -1)
        lt = torch.log_softmax(ht.bfloat16().double() @ wt.bfloat16().double().t(), -1)
        if beta == 0.0:
            ref = (lt.exp() * (lt - ls)).sum(-1)
        elif beta == 1.0:
            ref = (ls.exp() * (ls - lt)).sum(-1)
        else:
            mix = torch.logaddexp(ls + torch.log(torch.tensor(1 - beta, device=dev, dtype=torch.float64)),
                                  lt + torch.log(torch.tensor(beta, device=dev, dtype=torch.float64)))
            ref = beta * (lt.exp() * (lt - mix)).sum(-1) + (1 - beta) * (ls.exp() * (ls - mix)).sum(-1)
        print(f"divergence beta={beta}: max abs err {(d.double() - ref).abs().max().item():.2e} "
              f"(mean {ref.mean().item():.3f})", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cuda")
    p.add_argument("--small", action="store_true", help="tiny shapes (CPU dry run)")
    args = p.parse_args()
    n, h, v = (48, 32, 700) if args.small else (1000, 512, 50257)
    logprob_checks(args.device, n, h, v)
    divergence_checks(args.device, 40 if args.small else 300, 500 if args.small else 5000)
    print(f"{args.device} check done", flush=True)


if __name__ == "__main__":
    main()
