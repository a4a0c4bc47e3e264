"""The one place that knows about DeepSpeed ZeRO-3: gather a partitioned LM head for the duration of a call.

Under ZeRO-3 every parameter is sharded to ``numel() == 0`` and re-materialised only inside its owning module's
forward hooks. A fused loss reads ``lm_head.weight`` directly and never calls ``lm_head``, so it would see an empty
tensor. :func:`gathered` all-gathers the given parameters once, yields, and re-partitions on exit; the engine enters
it once in its forward and once in its backward (the backward recomputes tiles from the weight). Nothing is gathered
when DeepSpeed is not installed, the parameters are plain tensors, or they are already available (tied embeddings
keep the weight ``AVAILABLE``, and re-partitioning it on exit would break ``embed_tokens``).

As in TRL 1.16, the gradient reduction of a gathered parameter relies on ZeRO-3's module hooks being armed, so the
loss must run inside the model's forward (e.g. from a ``forward`` override or a forward hook of the model).

Who gathers when (measured with deepspeed 0.19.8, tests/reference_impl/test_distributed.py): inside
``DeepSpeedEngine.forward`` DeepSpeed's own parameter getter (``ZeROOrderedDict.__getitem__``) all-gathers a
partitioned parameter the moment ``lm_head.weight`` is read and registers it as an external parameter of the running
module, which also re-gathers it for the backward; so on the trainers' path the engine receives an ``AVAILABLE``
weight and this context does nothing. It gathers when the engine is handed a partition outside a DeepSpeed forward
(a model built under ``deepspeed.zero.Init`` and not wrapped, or a call after the forward): then once in the
engine's forward and once in its backward, read-only, so only a frozen weight can be used that way.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch

__all__ = ["is_partitioned", "gathered"]


def is_partitioned(param: torch.Tensor | None) -> bool:
    """True when ``param`` is a ZeRO-3 parameter whose full data is not materialised on this rank right now."""
    if param is None or not hasattr(param, "ds_id"):
        return False
    try:
        from deepspeed.runtime.zero.partition_parameters import ZeroParamStatus
    except ImportError:  # pragma: no cover - a ds_id attribute without DeepSpeed installed
        return False
    return param.ds_status != ZeroParamStatus.AVAILABLE


@contextlib.contextmanager
def gathered(*params: torch.Tensor | None) -> Iterator[None]:
    """All-gather the partitioned ZeRO-3 parameters among ``params`` (``None`` allowed) for the ``with`` block.

    Read-only gather (``modifier_rank=None``): the engine never writes to the weight. Parameters passed twice (a
    shared head) are gathered once.
    """
    to_gather = list({id(p): p for p in params if is_partitioned(p)}.values())
    if not to_gather:
        yield
        return
    import deepspeed

    with deepspeed.zero.GatheredParameters(to_gather, modifier_rank=None):
        yield
