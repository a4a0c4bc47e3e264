"""`from compat.trl import GRPOTrainer, BCOTrainer, ...`: one import line that works on every supported TRL line.

Each name resolves, on first use, to the installed TRL's object wherever that version keeps it (top level or
`trl.experimental.*`), and to `reference_impl`'s implementation where the installed TRL has none (BCO on TRL >= 1.14,
the `trl.losses` names on TRL >= 1.14, every trainer when TRL is not installed at all). Importing this module imports neither torch nor trl; see `compat.resolve` for
the rules (lazy, cached, one notice per name saying which implementation was chosen).

Two small helpers TRL removed in 1.15 without a replacement function (`prepare_multimodal_messages_vllm`,
`dft_loss`) fall back to faithful copies kept here, so migrated code keeps its behaviour; the migrations point code at
these names and explain the TRL-native successor in MIGRATION.md. TRL 0.x helpers that no supported line has
(`setup_chat_format`, `get_kbit_device_map`, ...) are kept the same way; the bigger ones live in their own modules,
imported on first use: `compat._sft_data` (`DataCollatorForCompletionOnlyLM`, `ConstantLengthDataset`, TRL 0.19.1),
`compat._dataset_formatting` (`trl.extras.dataset_formatting`: the 0.26.2 formatting functions, 1.12.0's
`FORMAT_MAPPING`), `compat._script_args` (`SFTScriptArguments`, `DPOScriptArguments`, `RewardScriptArguments`, TRL 0.12.2) and
`compat._judges` (the judges of TRL 1.0.0).
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
    # TRL 0.x helpers that no supported TRL line (1.13+) has: the copies below, faithful to TRL's last body (the
    # removal release in the comment); no TRL candidate, since every supported line lacks them
    "setup_chat_format": (("compat.trl", "_setup_chat_format"),),  # removed in 0.26 (the 0.8-0.12 body)
    "SIMPLE_CHAT_TEMPLATE": (("compat.trl", "_SIMPLE_CHAT_TEMPLATE"),),  # removed in 0.27
    "SIMPLE_SFT_CHAT_TEMPLATE": (("compat.trl", "_SIMPLE_SFT_CHAT_TEMPLATE"),),  # removed in 0.25
    "SIMPLE_QUERY_CHAT_TEMPLATE": (("compat.trl", "_SIMPLE_QUERY_CHAT_TEMPLATE"),),  # removed in 0.11
    "get_exp_cap": (("compat.trl", "_get_exp_cap"),),  # removed in 0.29
    "cap_exp": (("compat.trl", "_cap_exp"),),  # removed in 0.29
    "get_kbit_device_map": (("compat.trl", "_get_kbit_device_map"),),  # removed in 1.8
    "is_wandb_available": (("compat.trl", "_is_wandb_available"),),  # trl.import_utils, removed in 0.11
    # removed in 0.20: the 0.19.1 classes, kept in compat._sft_data (it imports torch/transformers, so only on use)
    "DataCollatorForCompletionOnlyLM": (("compat._sft_data", "DataCollatorForCompletionOnlyLM"),),
    "ConstantLengthDataset": (("compat._sft_data", "ConstantLengthDataset"),),
    # trl.extras.dataset_formatting: the functions removed in 0.27 (0.26.2 bodies), FORMAT_MAPPING in 1.13 (1.12.0)
    **{n: (("compat._dataset_formatting", n),) for n in (
        "FORMAT_MAPPING", "conversations_formatting_function", "instructions_formatting_function",
        "get_formatting_func_from_dataset",
    )},
    # removed in 0.13 with trl.commands.cli_utils: the 0.12.2 dataclasses
    **{n: (("compat._script_args", n),) for n in ("SFTScriptArguments", "DPOScriptArguments", "RewardScriptArguments")},
    # removed in 0.9.2: the 0.8 - 0.9 dataclasses without the fields that are config fields now (see the module)
    **{n: (("compat._script_args", n),) for n in ("SftScriptArguments", "DpoScriptArguments")},
    # trl.commands.cli_utils (0.8 - 0.12), trl.scripts.chat (0.13 - 0.18): the 0.12.2 dataclass without `config`
    "ChatArguments": (("compat._script_args", "ChatArguments"),),
    # trl.experimental.judges (0.29 - 1.0; `trl` before), removed in 1.1: the 1.0.0 classes (backends imported lazily)
    **{n: (("compat._judges", n),) for n in (
        "BaseJudge", "BaseRankJudge", "BasePairwiseJudge", "BaseBinaryJudge", "AllTrueJudge", "HfPairwiseJudge",
        "OpenAIPairwiseJudge", "PairRMJudge",
    )},
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


# -- TRL 0.x helpers ----------------------------------------------------------------------------------------------

# trl.trainer.utils.SIMPLE_QUERY_CHAT_TEMPLATE (TRL 0.9 - 0.10) and SIMPLE_SFT_CHAT_TEMPLATE (0.9 - 0.24), verbatim
_SIMPLE_QUERY_CHAT_TEMPLATE = "{% for message in messages %}{{' ' + message['content']}}{% endfor %}"
_SIMPLE_SFT_CHAT_TEMPLATE = "{% for message in messages %}{{' ' + message['content']}}{% endfor %}{{ eos_token }}"

# trl.trainer.utils.SIMPLE_CHAT_TEMPLATE (TRL 0.11 - 0.26), verbatim
_SIMPLE_CHAT_TEMPLATE = (
    "{% for message in messages %}{{message['role'].capitalize() + ': ' + message['content'] + '\n\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}"
)


def _setup_chat_format(model: Any, tokenizer: Any, format: str | None = "chatml",
                       resize_to_multiple_of: int | None = None) -> tuple[Any, Any]:
    """Copy of TRL 0.8 - 0.12 `trl.setup_chat_format` (removed in TRL 0.26): ChatML special tokens and template.

    The PPO-era body: the embedding is resized to `len(tokenizer)` and an existing chat template is overwritten
    (TRL 0.13 - 0.25 raised instead, 0.19 - 0.25 resized to `len(tokenizer.vocab)`). TRL's own successor,
    `trl.clone_chat_template`, copies another model's template and tokens, which is a different operation.
    """
    if format != "chatml":
        raise ValueError(f"Format {format} not available. Please use one of dict_keys(['chatml'])")
    bos, eos = "<|im_start|>", "<|im_end|>"
    tokenizer.eos_token = eos
    tokenizer.pad_token = eos
    tokenizer.bos_token = bos
    tokenizer.add_special_tokens({"additional_special_tokens": [bos, eos]})
    tokenizer.chat_template = (
        "{% for message in messages %}"
        f"{{{{'{bos}' + message['role'] + '\n' + message['content'] + '{eos}' + '\n'}}}}"
        "{% endfor %}"
        "{% if add_generation_prompt %}"
        f"{{{{ '{bos}assistant\n' }}}}"
        "{% endif %}"
    )
    model.resize_token_embeddings(len(tokenizer), pad_to_multiple_of=resize_to_multiple_of)
    if getattr(model, "config", None) is not None:
        model.config.pad_token_id = tokenizer.pad_token_id
        model.config.bos_token_id = tokenizer.bos_token_id
        model.config.eos_token_id = tokenizer.eos_token_id
    if getattr(model, "generation_config", None) is not None:
        model.generation_config.bos_token_id = tokenizer.bos_token_id
        model.generation_config.eos_token_id = tokenizer.eos_token_id
        model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model, tokenizer


def _get_exp_cap(value: Any, decimal: int = 4) -> Any:
    """Copy of TRL <= 0.28 `trl.trainer.utils.get_exp_cap`: log(dtype max), floored to `decimal` places."""
    import torch

    vdtype_max = torch.zeros([1]).to(value.dtype) + torch.finfo(value.dtype).max
    vdtype_log_max = torch.log(vdtype_max).to(value.device)
    return torch.floor(vdtype_log_max * 10**decimal) / 10**decimal if decimal > 0 else vdtype_log_max


def _cap_exp(value: Any, cap: float = -1) -> Any:
    """Copy of TRL <= 0.28 `trl.trainer.utils.cap_exp`: `exp` with the exponent capped below overflow."""
    import torch

    cap = _get_exp_cap(value) if cap < 0 else cap
    return torch.exp(torch.clamp(value, max=cap))


def _is_wandb_available() -> bool:
    """Copy of TRL <= 0.10 `trl.import_utils.is_wandb_available`: is the `wandb` package importable?

    Unlike `transformers.integrations.is_wandb_available` it ignores `WANDB_DISABLED` / `WANDB_MODE`.
    """
    from importlib.util import find_spec

    return find_spec("wandb") is not None


def _get_kbit_device_map() -> dict[str, int] | None:
    """Copy of TRL <= 1.7 `trl.get_kbit_device_map`: this process's local device for k-bit (bitsandbytes) loading."""
    import torch
    from accelerate import PartialState
    from transformers.utils import is_torch_xpu_available

    if torch.cuda.is_available() or is_torch_xpu_available():
        return {"": PartialState().local_process_index}
    return None
