from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trl import PPOConfig, PPOTrainer


def describe(trainer: "PPOTrainer", config: PPOConfig) -> str:
    return f"{type(trainer).__name__}: {config.output_dir}"
