"""`compat.trl.AdamW`: transformers 4.49's AdamW update, held against the update written out here in float64 (the
4.49.0 wheel's `AdamW.step`: eps added to sqrt(v) before the bias correction scales the step, weight decay on the
updated weights), and shown to differ from `torch.optim.AdamW` (why the migration does not switch to it)."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")


def _oracle(p0: list[float], grads: list[list[float]], lr: float, betas: tuple[float, float], eps: float,
            weight_decay: float, correct_bias: bool) -> list[float]:
    b1, b2 = betas
    p, m, v = list(p0), [0.0] * len(p0), [0.0] * len(p0)
    for t, g in enumerate(grads, start=1):
        for i, gi in enumerate(g):
            m[i] = b1 * m[i] + (1 - b1) * gi
            v[i] = b2 * v[i] + (1 - b2) * gi * gi
            step = lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t) if correct_bias else lr
            p[i] -= step * m[i] / (math.sqrt(v[i]) + eps)
            p[i] -= lr * weight_decay * p[i]
    return p


def _run(cls, p0, grads, **kw) -> list[float]:
    w = torch.nn.Parameter(torch.tensor(p0, dtype=torch.float64))
    opt = cls([w], **kw)
    for g in grads:
        w.grad = torch.tensor(g, dtype=torch.float64)
        opt.step()
    return w.detach().tolist()


P0 = [0.5, -1.25, 2.0, 1e-3]
GRADS = [[0.1, -0.3, 2.0, 1e-4], [0.2, 0.1, -1.0, 0.0], [-0.05, 0.4, 0.5, 3e-4], [0.3, -0.2, 0.1, -1e-4]]


@pytest.mark.parametrize("kw", [
    {},  # the defaults: lr 1e-3, eps 1e-6, weight_decay 0, correct_bias True
    {"lr": 0.05, "betas": (0.9, 0.95), "eps": 1e-3, "weight_decay": 0.1},
    {"lr": 0.01, "eps": 1e-2, "correct_bias": False, "weight_decay": 0.01, "no_deprecation_warning": True},
])
def test_adamw_is_transformers_4_49_update(kw):
    from compat.trl import AdamW

    args = {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-6, "weight_decay": 0.0, "correct_bias": True,
            **{k: v for k, v in kw.items() if k != "no_deprecation_warning"}}
    got = _run(AdamW, P0, GRADS, **kw)
    want = _oracle(P0, GRADS, **args)
    assert got == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_adamw_state_and_errors():
    from compat.trl import AdamW

    w = torch.nn.Parameter(torch.ones(3))
    opt = AdamW([w], lr=0.1)
    w.grad = torch.ones(3)
    opt.step()
    state = opt.state_dict()["state"][0]
    assert state["step"] == 1 and set(state) == {"step", "exp_avg", "exp_avg_sq"}  # transformers' state layout
    with pytest.raises(ValueError, match="Invalid learning rate"):
        AdamW([w], lr=-1.0)
    with pytest.raises(ValueError, match="Invalid beta parameter"):
        AdamW([w], betas=(0.9, 1.0))


def test_torch_adamw_is_not_the_same_update():
    """Why no rewrite to torch.optim.AdamW: with the same lr, betas, eps and weight decay the weights differ."""
    from compat.trl import AdamW

    kw = {"lr": 0.05, "betas": (0.9, 0.999), "eps": 1e-3, "weight_decay": 0.1}
    ours = _run(AdamW, P0, GRADS, **kw)
    theirs = _run(torch.optim.AdamW, P0, GRADS, **kw)
    assert max(abs(a - b) for a, b in zip(ours, theirs, strict=True)) > 1e-4
