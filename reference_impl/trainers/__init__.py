"""The reference trainer set: one module per trainer, its config beside it (see each module's docstring).

Imports are lazy (module `__getattr__`), so `import reference_impl.trainers` costs nothing until a trainer is used.

`EXPORTS` is the one table of reference_impl's public trainer names (name -> module under `reference_impl.trainers`);
`reference_impl` re-exports exactly these, and `compat.trl`'s reference fallbacks must be among them (tested).
"""

from __future__ import annotations

from reference_impl._lazy import lazy_exports

EXPORTS: dict[str, str] = {
    "SFTTrainer": "sft", "SFTConfig": "sft",
    "DPOTrainer": "dpo", "DPOConfig": "dpo",
    "KTOTrainer": "kto", "KTOConfig": "kto",
    "BCOTrainer": "bco", "BCOConfig": "bco",
    "GRPOTrainer": "grpo", "GRPOConfig": "grpo",
    "RLOOTrainer": "rloo", "RLOOConfig": "rloo",
    "OnlineDPOTrainer": "online_dpo", "OnlineDPOConfig": "online_dpo",
    "XPOTrainer": "xpo", "XPOConfig": "xpo",
    "NashMDTrainer": "nash_md", "NashMDConfig": "nash_md",
    "A2POTrainer": "a2po", "A2POConfig": "a2po",
    "DistillationTrainer": "distillation", "DistillationConfig": "distillation",
    "RewardTrainer": "reward", "RewardConfig": "reward",
    "PRMTrainer": "prm", "PRMConfig": "prm",
    "create_reference_model": "_model",
    "UnsupportedFieldError": "_config",
}

__all__ = sorted(EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, EXPORTS, globals())
