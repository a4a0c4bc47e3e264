"""The trainers' single doorway to the chunked engine (`reference_impl.chunking`).

Trainers ask for per-token statistics by the names TRL's fused head uses for the same quantities
(`logp`, `entropy`, `is_top1`, `mean_logits`, `log_sum_sq_probs`); this module maps them to the engine's output
names, so the call sites in the trainers stay one line and a rename in the engine is a one-line change here.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

# trainer name -> engine output name
_ENGINE_NAMES = {
    "logp": "logp",
    "entropy": "entropy",
    "is_top1": "argmax_correct",
    "mean_logits": "mean_logit",
    "log_sum_sq_probs": "logsumsq",
}


def engine_token_stats(
    hidden: torch.Tensor,
    weight: torch.Tensor,
    targets: torch.Tensor,
    *,
    bias: torch.Tensor | None = None,
    temperature: float = 1.0,
    logit_scale: float = 1.0,
    softcap: float | None = None,
    outputs: Sequence[str] = ("logp",),
) -> dict[str, torch.Tensor]:
    """Per-token statistics of `targets` for `hidden [N,H] @ weight[V,H].T`, computed chunk by chunk."""
    from reference_impl.chunking import chunked_logprobs

    wanted = tuple(dict.fromkeys(("logp", *outputs)))
    engine_outputs = tuple(_ENGINE_NAMES[name] for name in wanted)
    result = chunked_logprobs(
        hidden,
        weight,
        targets,
        bias=bias,
        temperature=temperature,
        logit_scale=logit_scale,
        softcap=softcap,
        outputs=engine_outputs,
    )
    return {name: result[_ENGINE_NAMES[name]] for name in wanted}
