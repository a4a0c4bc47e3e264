"""`from compat.trl import GRPOTrainer, BCOTrainer, ...`: one import line that works on every supported TRL line.

Each name resolves, on first use, to the installed TRL's object wherever that version keeps it (top level or
`trl.experimental.*`), and to `reference_impl`'s implementation where the installed TRL has none (BCO on TRL >= 1.14,
the `trl.losses` names on TRL >= 1.14, every trainer when TRL is not installed at all). Importing this module imports neither torch nor trl; see `compat.resolve` for
the rules (lazy, cached, one notice per name saying which implementation was chosen).

Two small helpers TRL removed in 1.15 without a replacement function (`prepare_multimodal_messages_vllm`,
`dft_loss`) fall back to faithful copies kept here, so migrated code keeps its behaviour; the migrations point code at
these names and explain the TRL-native successor in MIGRATION.md.
"""

from __future__ import annotations

import copy
from typing import Any

import compat
from compat.resolve import NameTable

compat._check_deferred()  # compat loaded by the migrator library first: check now (see compat/__init__.py)

_EXP = "trl.experimental"

_REF = "reference_impl"

_CANDIDATES: dict[str, tuple[tuple[str, str], ...]] = {
    # stable trainers and configs (top level throughout 1.9 - 1.16); reference_impl only when TRL is absent
    **{n: (("trl", n), (_REF, n)) for n in (
        "GRPOTrainer", "GRPOConfig", "RLOOTrainer", "RLOOConfig", "KTOTrainer", "KTOConfig", "DPOTrainer",
        "DPOConfig", "SFTTrainer", "SFTConfig", "RewardTrainer", "RewardConfig",
    )},
    # Online DPO only exists under trl.experimental.online_dpo since 0.29
    "OnlineDPOTrainer": ((f"{_EXP}.online_dpo", "OnlineDPOTrainer"), (_REF, "OnlineDPOTrainer")),
    "OnlineDPOConfig": ((f"{_EXP}.online_dpo", "OnlineDPOConfig"), (_REF, "OnlineDPOConfig")),
    # Distillation: stable from 1.10, experimental before
    "DistillationTrainer": (("trl", "DistillationTrainer"), (f"{_EXP}.distillation", "DistillationTrainer"),
                            (_REF, "DistillationTrainer")),
    "DistillationConfig": (("trl", "DistillationConfig"), (f"{_EXP}.distillation", "DistillationConfig"),
                           (_REF, "DistillationConfig")),
    # BCO: trl.experimental.bco until 1.13, removed in 1.14 (#7136) -> the reference implementation
    "BCOTrainer": ((f"{_EXP}.bco", "BCOTrainer"), (_REF, "BCOTrainer")),
    "BCOConfig": ((f"{_EXP}.bco", "BCOConfig"), (_REF, "BCOConfig")),
    # the real implementation lives in trl.experimental.utils; trl.create_reference_model is a FutureWarning wrapper
    "create_reference_model": ((f"{_EXP}.utils", "create_reference_model"), ("trl", "create_reference_model"),
                               (_REF, "create_reference_model")),
    # removed in 1.15 (no TRL successor function): TRL's while it exists, then the copies below
    "prepare_multimodal_messages_vllm": (
        ("trl.data_utils", "prepare_multimodal_messages_vllm"),
        ("compat.trl", "_prepare_multimodal_messages_vllm"),
    ),
    "dft_loss": (("trl.trainer.sft_trainer", "dft_loss"), ("compat.trl", "_dft_loss")),
    # the fused losses (trl.losses, 1.13 only): see compat.losses
    **{n: (("trl.losses", n), ("reference_impl.losses", n)) for n in (
        "FusedLinearDPOLoss", "FusedLinearKTOLoss", "FusedLinearGRPOLoss", "FusedLinearJSDLoss",
    )},
}

TABLE = NameTable(__name__, _CANDIDATES)
TABLE.install(globals())


def _prepare_multimodal_messages_vllm(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copy of TRL <= 1.14 `trl.data_utils.prepare_multimodal_messages_vllm`: `image` blocks -> `image_pil` blocks.

    TRL >= 1.15's vLLM client accepts `{"type": "image", "image": PIL}` blocks as they are, so with TRL's own
    generation this call is no longer needed; it is kept for code that hands the messages to vLLM itself.
    """
    messages = copy.deepcopy(messages)
    for message in messages:
        if isinstance(message["content"], list):
            for part in message["content"]:
                if part["type"] == "image":
                    part["type"] = "image_pil"
                    part["image_pil"] = part.pop("image")
    return messages


def _dft_loss(outputs: Any, labels: Any, num_items_in_batch: Any = None) -> Any:
    """Copy of TRL <= 1.14 `trl.trainer.sft_trainer.dft_loss` (DFT, arXiv 2508.05629), for `compute_loss_func`.

    On TRL >= 1.15 prefer `SFTConfig(loss_type="dft")`, which computes the same loss inside the trainer.
    """
    import torch

    labels = torch.nn.functional.pad(labels, (0, 1), value=-100)
    shift_labels = labels[..., 1:]
    loss_mask = shift_labels != -100
    shift_labels[~loss_mask] = 0
    logits = outputs.logits
    logprobs = torch.gather(logits.log_softmax(-1), -1, shift_labels.unsqueeze(-1)).squeeze(-1)
    per_token_loss = -logprobs.exp().detach() * logprobs
    if num_items_in_batch is None:
        num_items_in_batch = loss_mask.sum()
    return (per_token_loss * loss_mask).sum() / num_items_in_batch
