from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trl import GRPOConfig, GRPOTrainer


def describe(trainer: "GRPOTrainer", config: GRPOConfig) -> str:
    return f"{type(trainer).__name__}: {config.output_dir}"
