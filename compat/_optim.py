"""`AdamW` as transformers had it until 4.49 (`transformers.AdamW`, `transformers.optimization.AdamW`; removed in 4.50).

It is not `torch.optim.AdamW`, so code written against it cannot simply switch (read from the 4.49.0 wheel):

* epsilon is added to `sqrt(v)` *before* the bias correction, which scales the step:
  `p -= lr * sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + eps)`; torch divides `sqrt(v)` by `sqrt(1 - b2^t)` first
  and adds `eps` after, so the two differ in every early step;
* the decoupled weight decay is applied *after* the Adam update, to the updated weights (`p -= lr * wd * p`); torch
  decays first (`p *= 1 - lr * wd`);
* the defaults differ: `eps=1e-6` and `weight_decay=0.0` (torch: `1e-8`, `1e-2`), and `correct_bias=False` turns the
  bias correction off (BERT's TF optimizer), which torch cannot do.

This class reproduces those updates (state: `step` as an int, `exp_avg`, `exp_avg_sq`, so a state dict saved by
transformers' optimizer loads here). `no_deprecation_warning` is accepted and ignored: the deprecation it silenced is
what this copy answers. The migration `removed-adamw` points code here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import torch


class AdamW(torch.optim.Optimizer):
    def __init__(self, params: Iterable, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-6, weight_decay: float = 0.0, correct_bias: bool = True,
                 no_deprecation_warning: bool = False) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr} - should be >= 0.0")
        for beta in betas:
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter: {beta} - should be in [0.0, 1.0)")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps} - should be >= 0.0")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "correct_bias": correct_bias}
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure: Callable | None = None):
        loss = None
        if closure is not None:
            loss = closure()  # under no_grad, as transformers called it (torch's optimizers enable grad here)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.grad.is_sparse:
                    raise RuntimeError("Adam does not support sparse gradients, please consider SparseAdam instead")
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p)  # m: moving average of the gradient
                    state["exp_avg_sq"] = torch.zeros_like(p)  # v: moving average of its square
                m, v = state["exp_avg"], state["exp_avg_sq"]
                state["step"] += 1
                m.mul_(beta1).add_(p.grad, alpha=1.0 - beta1)
                v.mul_(beta2).addcmul_(p.grad, p.grad, value=1.0 - beta2)
                step_size = group["lr"]
                if group["correct_bias"]:
                    t = state["step"]
                    step_size *= math.sqrt(1.0 - beta2 ** t) / (1.0 - beta1 ** t)
                p.addcdiv_(m, v.sqrt().add_(group["eps"]), value=-step_size)
                if group["weight_decay"] > 0.0:  # decoupled, on the updated weights
                    p.add_(p, alpha=-group["lr"] * group["weight_decay"])
        return loss
