"""Fused kernels for the chunked LM-head engine, chosen per call by :func:`fold_backend`.

The engine (:mod:`reference_impl.chunking`) projects one ``[tokens, Cv]`` tile at a time with the library GEMM and
then *folds* the tile: per-token online statistics in the forward, the softmax gradient written over the tile in the
backward. In torch that fold is ~30 small kernels per tile, which a GPU runs launch-bound; :mod:`.triton_fold` does
each direction in one Triton kernel (the GEMMs stay cuBLAS). The torch fold in ``chunking.py`` stays the readable
reference and the fallback.

``REFERENCE_IMPL_FOLD`` picks the fold: ``auto`` (default: Triton for CUDA tiles when ``triton`` imports, torch
otherwise), ``torch`` (always the reference), ``triton`` (always the kernel; CPU tensors need ``TRITON_INTERPRET=1``,
which is how the tests run it without a GPU).
"""

from __future__ import annotations

import functools
import os
from types import ModuleType

import torch

__all__ = ["fold_backend", "triton_available"]


@functools.cache
def triton_available() -> bool:
    """Whether ``import triton`` works here (cached; the import itself is deferred to the first CUDA tile)."""
    try:
        import triton  # noqa: F401
    except ImportError:
        return False
    return True


def fold_backend(tile: torch.Tensor) -> ModuleType | None:
    """The fused-fold module for this tile, or ``None`` for the torch reference fold."""
    choice = os.environ.get("REFERENCE_IMPL_FOLD", "auto").lower()
    if choice not in ("auto", "torch", "triton"):
        raise ValueError(f"REFERENCE_IMPL_FOLD must be 'auto', 'torch' or 'triton', got {choice!r}")
    if choice == "torch" or (choice == "auto" and not (tile.is_cuda and triton_available())):
        return None
    if not triton_available():
        raise ImportError("REFERENCE_IMPL_FOLD=triton but `import triton` fails: pip install triton (see pyproject)")
    from . import triton_fold

    return triton_fold
