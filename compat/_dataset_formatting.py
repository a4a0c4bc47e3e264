"""The contents of `trl.extras.dataset_formatting`, which TRL removed in two steps: the formatting functions in 0.27,
the module (then holding only `FORMAT_MAPPING`) in 1.13.

Served through `compat.trl` (`from compat.trl import conversations_formatting_function`); the migration
`removed-dataset-formatting` points PPO-era imports here. Same signatures and behaviour as the last release that had
each name (read from the wheels): the functions of TRL 0.26.2 (their `tools=` parameter was added in 0.14 and defaults
to None, which is what `apply_chat_template` got from the 0.8-0.13 bodies), minus the "will be removed in TRL 0.27"
`FutureWarning`; `FORMAT_MAPPING` of TRL 1.12.0 (a `datasets.List` feature from datasets 4 on, a one-element list
before). Written for this project from the observed behaviour, not copied.

This module imports `datasets`; `compat.trl` imports it only on first use of one of its names.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Literal

import datasets
from datasets import Dataset, Value
from packaging.version import Version

__all__ = [
    "FORMAT_MAPPING", "conversations_formatting_function", "get_formatting_func_from_dataset",
    "instructions_formatting_function",
]

_MESSAGE = {"content": Value(dtype="string", id=None), "role": Value(dtype="string", id=None)}
if Version(datasets.__version__) >= Version("4.0.0"):
    _CHATML: Any = datasets.List(_MESSAGE)
else:  # datasets 3 spells a list feature as a one-element list
    _CHATML = [_MESSAGE]

FORMAT_MAPPING: dict[str, Any] = {
    "chatml": _CHATML,
    "instruction": {"completion": Value(dtype="string", id=None), "prompt": Value(dtype="string", id=None)},
}


def conversations_formatting_function(tokenizer: Any, messages_field: Literal["messages", "conversations"],
                                      tools: list | None = None) -> Callable[[dict], str | list[str]]:
    """A formatting function for a dataset whose `messages_field` column holds chat messages: the tokenizer's chat
    template applied (untokenized) to one example, or to each example of a batch (a list of conversations)."""

    def format_dataset(examples: dict) -> str | list[str]:
        messages = examples[messages_field]
        if isinstance(messages[0], list):  # a batch: one conversation per row
            return [tokenizer.apply_chat_template(m, tokenize=False, tools=tools) for m in messages]
        return tokenizer.apply_chat_template(messages, tokenize=False, tools=tools)

    return format_dataset


def instructions_formatting_function(tokenizer: Any) -> Callable[[dict], str | list[str]]:
    """A formatting function for a prompt/completion dataset: each pair as a user turn and an assistant turn through
    the tokenizer's chat template (untokenized), for one example or each example of a batch."""

    def render(prompt: str, completion: str) -> str:
        turns = [{"role": "user", "content": prompt}, {"role": "assistant", "content": completion}]
        return tokenizer.apply_chat_template(turns, tokenize=False)

    def format_dataset(examples: dict) -> str | list[str]:
        if isinstance(examples["prompt"], list):
            prompts, completions = examples["prompt"], examples["completion"]
            return [render(prompts[i], completions[i]) for i in range(len(prompts))]
        return render(examples["prompt"], examples["completion"])

    return format_dataset


def get_formatting_func_from_dataset(dataset: Any, tokenizer: Any, tools: list | None = None
                                     ) -> Callable[[dict], str | list[str]] | None:
    """The formatting function matching the dataset's features: a ChatML `messages` or `conversations` column, or
    exactly the `prompt`/`completion` string columns; None for anything else (or a dataset that is not a
    `datasets.Dataset`)."""
    if not isinstance(dataset, Dataset):
        return None
    features = dataset.features
    if "messages" in features and features["messages"] == FORMAT_MAPPING["chatml"]:
        logging.info("Formatting dataset with chatml format")  # noqa: LOG015 (TRL logged on the root logger)
        return conversations_formatting_function(tokenizer, "messages", tools)
    # TRL's `if "conversations" ... elif instruction`: the instruction test runs only without a conversations column
    if "conversations" in features:
        if features["conversations"] == FORMAT_MAPPING["chatml"]:
            logging.info("Formatting dataset with chatml format")  # noqa: LOG015 (TRL logged on the root logger)
            return conversations_formatting_function(tokenizer, "conversations", tools)
    elif features == FORMAT_MAPPING["instruction"]:
        logging.info("Formatting dataset with instruction format")  # noqa: LOG015 (as TRL)
        return instructions_formatting_function(tokenizer)
    return None
