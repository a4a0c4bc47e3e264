"""Dataset formats and collation shared by every trainer, following TRL 1.16's conventions.

TRL accepts two *styles* (standard text, conversational lists of ``{"role", "content"}`` messages) and several
*types* (language modelling ``text``/``messages``; ``prompt``/``completion``; preference ``prompt``/``chosen``/
``rejected`` with an explicit or implicit prompt; unpaired preference ``prompt``/``completion``/``label``;
prompt-only). The helpers here reproduce TRL's tokenisation rules exactly (EOS appended to standard completions,
chat templates applied by the tokenizer, the completion starting where the tokenised prompt and prompt+completion
diverge) so that a batch built here is token-for-token the batch TRL builds. Nothing in this module imports TRL.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import torch

IGNORE_INDEX = -100


class DatasetFormatError(ValueError):
    """A dataset lacks the columns a trainer needs, or mixes formats."""


def require_columns(column_names: Sequence[str], required: Sequence[Sequence[str]], trainer: str) -> None:
    """Raise a `DatasetFormatError` unless one of the alternative column sets in `required` is present."""
    present = set(column_names)
    if any(set(option) <= present for option in required):
        return
    options = " or ".join("(" + ", ".join(repr(c) for c in option) + ")" for option in required)
    raise DatasetFormatError(
        f"{trainer} needs the dataset columns {options}; found {sorted(present)}. See TRL's dataset formats "
        "(https://huggingface.co/docs/trl/dataset_formats) for the expected layout."
    )


def column_names(dataset: Any) -> list[str]:
    names = getattr(dataset, "column_names", None)
    if names is None:  # IterableDataset without resolved features
        names = list(next(iter(dataset)).keys())
    return list(names)


def is_conversational(example: dict[str, Any]) -> bool:
    """True when the example's text fields are lists of chat messages (TRL's `is_conversational`)."""
    for key in ("prompt", "chosen", "rejected", "completion", "messages"):
        value = example.get(key)
        if isinstance(value, list) and value and isinstance(value[0], dict) and "role" in value[0]:
            return True
    return False


def extract_prompt(example: dict[str, Any]) -> dict[str, Any]:
    """Split an implicit-prompt preference example into the shared prefix and the two continuations.

    Same rule as TRL's `extract_prompt`: the prompt ends at the first differing element (character or message),
    minus a trailing space.
    """
    chosen, rejected = example["chosen"], example["rejected"]
    idx = 0
    for idx in range(min(len(chosen), len(rejected))):
        if chosen[idx] != rejected[idx]:
            if chosen[idx - 1] == " ":
                idx -= 1
            break
    return {"prompt": chosen[:idx], "chosen": chosen[idx:], "rejected": rejected[idx:]}


def template_kwargs(example: dict[str, Any]) -> dict[str, Any]:
    tools = example.get("tools")
    tools = json.loads(tools) if isinstance(tools, str) else tools
    return {"tools": tools, **(example.get("chat_template_kwargs") or {})}


def tokenize(tokenizer: Any, text_or_messages: str | list, **chat_kwargs: Any) -> list[int]:
    """Token ids of a standard string (tokenizer call) or a conversation (the tokenizer's chat template)."""
    if isinstance(text_or_messages, list):
        out = tokenizer.apply_chat_template(text_or_messages, tokenize=True, return_dict=True, **chat_kwargs)
        ids = out["input_ids"]
    else:
        ids = tokenizer(text=text_or_messages)["input_ids"]
    if ids and isinstance(ids[0], list):
        ids = ids[0]
    return list(ids)


def common_prefix_length(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def add_eos(text: str, eos_token: str) -> str:
    return text if text.endswith(eos_token) else text + eos_token


def tokenize_prompt_completions(
    example: dict[str, Any], tokenizer: Any, completion_keys: Sequence[str], add_eos_token: bool = True
) -> dict[str, list[int]]:
    """``prompt_ids`` and ``<key>_ids`` for each completion key, TRL's DPO/SFT/KTO tokenisation.

    Standard text gets the EOS appended to each completion; conversations are rendered by the chat template (the
    prompt with the generation prompt). The prompt is cut where prompt and prompt+completion token ids diverge.
    """
    kwargs = template_kwargs(example)
    prompt = example["prompt"]
    if is_conversational(example):
        prompt_ids = tokenize(tokenizer, prompt, add_generation_prompt=True, **kwargs)
        full = {k: tokenize(tokenizer, prompt + example[k], **kwargs) for k in completion_keys}
    else:
        eos = tokenizer.eos_token
        full = {
            k: tokenize(tokenizer, prompt + (add_eos(example[k], eos) if add_eos_token else example[k]))
            for k in completion_keys
        }
        prompt_ids = tokenize(tokenizer, prompt)
    prompt_len = min(common_prefix_length(prompt_ids, ids) for ids in full.values())
    out = {"prompt_ids": prompt_ids[:prompt_len]}
    for k, ids in full.items():
        out[f"{k}_ids"] = ids[prompt_len:]
    return out


def truncate(ids: list[int], max_length: int | None, mode: str = "keep_start") -> list[int]:
    if max_length is None or len(ids) <= max_length:
        return ids
    if mode == "keep_start":
        return ids[:max_length]
    if mode == "keep_end":
        return ids[-max_length:]
    raise ValueError(f"Unsupported truncation mode {mode!r}: expected 'keep_start' or 'keep_end'.")


def pad(
    tensors: Sequence[torch.Tensor],
    padding_value: float = 0,
    padding_side: str = "right",
    pad_to_multiple_of: int | None = None,
) -> torch.Tensor:
    """Stack 1-D tensors of different lengths into one 2-D tensor, padded left or right."""
    length = max(t.size(0) for t in tensors) if tensors else 0
    if pad_to_multiple_of:
        length = -(-length // pad_to_multiple_of) * pad_to_multiple_of
    out = tensors[0].new_full((len(tensors), length), padding_value)
    for i, t in enumerate(tensors):
        if padding_side == "right":
            out[i, : t.size(0)] = t
        else:
            out[i, length - t.size(0) :] = t
    return out


def pad_lists(
    rows: Sequence[Sequence[int | float]],
    padding_value: float,
    padding_side: str = "right",
    dtype: torch.dtype = torch.long,
    pad_to_multiple_of: int | None = None,
) -> torch.Tensor:
    return pad([torch.tensor(list(r), dtype=dtype) for r in rows], padding_value, padding_side, pad_to_multiple_of)


def completion_mask_after_eos(completion_ids: torch.Tensor, eos_token_ids: Sequence[int]) -> torch.Tensor:
    """1 up to and including the first EOS of each row, 0 afterwards (TRL's completion mask)."""
    is_eos = torch.isin(completion_ids, torch.tensor(list(eos_token_ids), device=completion_ids.device))
    eos_idx = torch.full((is_eos.size(0),), is_eos.size(1), dtype=torch.long, device=completion_ids.device)
    has_eos = is_eos.any(dim=1)
    eos_idx[has_eos] = is_eos.int().argmax(dim=1)[has_eos]
    positions = torch.arange(is_eos.size(1), device=completion_ids.device).expand(is_eos.size(0), -1)
    return (positions <= eos_idx.unsqueeze(1)).long()


def render_prompt(example: dict[str, Any], tokenizer: Any, **chat_kwargs: Any) -> str:
    """The prompt as text: standard prompts as-is, conversational ones through the chat template."""
    prompt = example["prompt"]
    if not (isinstance(prompt, list) and prompt and isinstance(prompt[0], dict)):
        return prompt
    last = prompt[-1]["role"]
    return tokenizer.apply_chat_template(
        prompt,
        tokenize=False,
        add_generation_prompt=last in ("user", "tool", "system"),
        continue_final_message=last == "assistant",
        **{**template_kwargs(example), **chat_kwargs},
    )


def identity_collator(features: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Online trainers collate nothing: generation happens on the raw examples."""
    return features
