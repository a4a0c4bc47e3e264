"""reference_impl: a readable, lean post-PPO trainer set on `transformers.Trainer`, independent of TRL.

`from reference_impl import GRPOTrainer, GRPOConfig` (and SFT, DPO, KTO, BCO, RLOO, OnlineDPO, A2PO, Distillation,
Reward, `create_reference_model`) mirrors TRL 1.16's names and constructor arguments. The export table is
`reference_impl.trainers.EXPORTS`. Every exported name is loaded lazily, so `import reference_impl` imports neither
torch nor transformers.

Layout: `chunking` (the chunked LM-head engine), `losses` (each family's math on per-token values), `trainers` (thin
`Trainer` subclasses), `accelerate_configs` (DDP / FSDP2 / DeepSpeed ZeRO-2/3 launch configs).
"""

from __future__ import annotations

import importlib
from typing import Any

# the one export table lives in reference_impl.trainers (a cheap package: no torch until a trainer is used)
from .trainers import EXPORTS as _TRAINER_EXPORTS

__all__ = sorted(_TRAINER_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _TRAINER_EXPORTS:
        value = getattr(importlib.import_module("reference_impl.trainers"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
