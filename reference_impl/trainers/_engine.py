"""The one place where the engine's output names become TRL's (the trainers' doorway to `reference_impl.chunking`).

Above the engine, reference_impl speaks TRL's names for the per-token statistics (those of TRL 1.16's fused head,
`trl.kernels`): `logp`, `entropy`, `is_top1`, `mean_logits`, `log_sum_sq_probs`. The trainers request them here,
and the losses (`reference_impl.losses`) take them under the same keyword names, so a trainer passes them straight
through. The engine keeps its own descriptive names (`argmax_correct`, `mean_logit`, `logsumsq`); `_ENGINE_NAMES`
below is the only translation between the two, so renaming either side is a one-line change here.
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
