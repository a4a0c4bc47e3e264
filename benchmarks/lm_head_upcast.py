"""What the `lm-head-fp32-upcast` rewrite buys: the LM-head projection + cross-entropy, before and after, one run.

Before (the habit TRL <= 1.12 had):  logits = h.float() @ w.float().t()
After  (what the rule writes):       logits = (h @ w.to(h.dtype).t()).float()

Both feed the same fp32 cross-entropy. Prints forward+backward time, peak memory, and how far the loss and the
gradients of the "after" form are from the fp32 reference, side by side, from one process:

    python benchmarks/lm_head_upcast.py                 # CUDA if present (tokens 8192, hidden 4096, vocab 151936)
    python benchmarks/lm_head_upcast.py --tokens 512 --hidden 256 --vocab 8192   # small, e.g. on CPU

Only ratios from the same run are meaningful; nothing here is asserted.
"""

from __future__ import annotations

import argparse
import time

import torch
import torch.nn.functional as F


def before(h: torch.Tensor, w: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    logits = h.float() @ w.float().t()
    return F.cross_entropy(logits, y)


def after(h: torch.Tensor, w: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    logits = (h @ w.to(h.dtype).t()).float()
    return F.cross_entropy(logits, y)


def measure(fn, h, w, y, iters: int, device: torch.device) -> tuple[float, float]:
    """(milliseconds per forward+backward, peak MiB above the inputs)."""
    def step() -> None:
        h.grad = w.grad = None
        fn(h, w, y).backward()

    for _ in range(3):
        step()
    if device.type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            step()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / iters, (torch.cuda.max_memory_allocated() - base) / 2**20
    t0 = time.perf_counter()
    for _ in range(iters):
        step()
    return (time.perf_counter() - t0) * 1000 / iters, float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=8192)
    parser.add_argument("--hidden", type=int, default=4096)
    parser.add_argument("--vocab", type=int, default=151936)
    parser.add_argument("--iters", type=int, default=10)
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    gen = torch.Generator(device="cpu").manual_seed(0)
    h = (torch.randn(args.tokens, args.hidden, generator=gen) * 2.0).to(device, torch.bfloat16).requires_grad_()
    w = (torch.randn(args.vocab, args.hidden, generator=gen) * args.hidden ** -0.5).to(device, torch.bfloat16)
    w.requires_grad_()
    y = torch.randint(0, args.vocab, (args.tokens,), generator=gen).to(device)

    losses, grads = {}, {}
    for name, fn in (("before", before), ("after", after)):
        h.grad = w.grad = None
        loss = fn(h, w, y)
        loss.backward()
        losses[name], grads[name] = loss.detach().double(), (h.grad.double(), w.grad.double())
    times = {name: measure(fn, h, w, y, args.iters, device) for name, fn in (("before", before), ("after", after))}

    def rel(a: torch.Tensor, b: torch.Tensor) -> float:
        return ((a - b).norm() / b.norm()).item()

    print(f"device {device}, bf16 inputs, tokens {args.tokens}, hidden {args.hidden}, vocab {args.vocab}")
    print(f"{'form':<8}{'ms/step':>10}{'peak MiB':>10}{'loss':>12}")
    for name in ("before", "after"):
        ms, mib = times[name]
        print(f"{name:<8}{ms:>10.2f}{mib:>10.0f}{losses[name].item():>12.6f}")
    print(f"speed-up before/after: {times['before'][0] / times['after'][0]:.2f}x; "
          f"peak memory after/before: {times['after'][1] / times['before'][1]:.2f}")
    print(f"loss rel. diff {abs(losses['after'] - losses['before']).item() / losses['before'].item():.2e}; "
          f"grad_h rel. diff {rel(grads['after'][0], grads['before'][0]):.2e}; "
          f"grad_w rel. diff {rel(grads['after'][1], grads['before'][1]):.2e}")


if __name__ == "__main__":
    main()
