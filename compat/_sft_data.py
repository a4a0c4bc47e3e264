"""Copies of the two SFT data helpers TRL removed in 0.20: `DataCollatorForCompletionOnlyLM`, `ConstantLengthDataset`.

Served through `compat.trl` (`from compat.trl import DataCollatorForCompletionOnlyLM`); the migration
`removed-sft-data-helpers` points PPO-era imports here. Both keep the constructor signature and the observable
behaviour of their last release, TRL 0.19.1 (`trl/trainer/utils.py`, read from the wheel), minus the
"will be removed in 0.20.0" `DeprecationWarning` their constructors emitted there. Written for this project from the
documented and observed behaviour, not copied.

This module imports torch, transformers and datasets; `compat.trl` imports it only on first use of one of its names.
"""

from __future__ import annotations

import random
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import datasets
import torch
from torch.utils.data import IterableDataset as TorchIterableDataset
from transformers import DataCollatorForLanguageModeling

__all__ = ["ConstantLengthDataset", "DataCollatorForCompletionOnlyLM"]


def _starts(row: torch.Tensor, pattern: list[int]) -> list[int]:
    """Every index of `row` where the token ids `pattern` begin (in increasing order)."""
    if not pattern:
        return []
    n = len(pattern)
    hits = []
    for idx in (row == pattern[0]).nonzero().flatten().tolist():
        if row[idx: idx + n].tolist() == list(pattern):
            hits.append(idx)
    return hits


class DataCollatorForCompletionOnlyLM(DataCollatorForLanguageModeling):
    """TRL 0.19.1's completion-only collator: labels are `ignore_index` everywhere but the responses.

    The batch is built by transformers' `DataCollatorForLanguageModeling` (padding, `labels` = `input_ids` with the
    pad token set to -100, `mlm=False`), then masked:

    * without `instruction_template`: every label up to the end of the *last* occurrence of `response_template`;
    * with `instruction_template` (multi-turn): every label from each instruction start to the end of the response
      template that follows it (from position 0 for the first turn, and when the text opens with a response), and
      from the last instruction to the end when it has no response after it.

    A row whose labels lack the response template (or, multi-turn, the instruction template) is masked entirely,
    with a `UserWarning` that shows the decoded row. Templates are strings (tokenized without special tokens) or
    token ids. `padding_free=True` flattens the batch into one row with `position_ids`, `cu_seq_lens_q/k` and
    `max_length_q/k` (no `attention_mask`), the first label of each sequence ignored. Other positional and keyword
    arguments (`tokenizer=`, `pad_to_multiple_of=`, ...) go to `DataCollatorForLanguageModeling`.

    One difference, so that TRL >= 0.20's `SFTTrainer` can use it: a `labels` key in the examples is dropped before
    padding (TRL 0.19 padded it and then overwrote it; TRL 1.x adds ragged `labels` that would not pad).
    """

    def __init__(
        self,
        response_template: str | list[int],
        instruction_template: str | list[int] | None = None,
        *args: Any,
        mlm: bool = False,
        ignore_index: int = -100,
        padding_free: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, mlm=mlm, **kwargs)
        self.instruction_template = instruction_template
        self.instruction_token_ids = self._token_ids(instruction_template)
        self.response_template = response_template
        self.response_token_ids = self._token_ids(response_template)
        if not self.mlm and self.instruction_template and self.tokenizer.pad_token_id == self.tokenizer.eos_token_id:
            warnings.warn(
                "The pad_token_id and eos_token_id values of this tokenizer are identical. If you are planning for "
                "multi-turn training, it can result in the model continuously generating questions and answers "
                "without eos token. To avoid this, set the pad_token_id to a different value.",
                UserWarning,
                stacklevel=2,
            )
        self.ignore_index = ignore_index
        self.padding_free = padding_free

    def _token_ids(self, template: str | list[int] | None) -> list[int] | None:
        if isinstance(template, str):
            return self.tokenizer.encode(template, add_special_tokens=False)
        return template

    def _not_found(self, what: str, template: Any, input_ids: torch.Tensor) -> None:
        warnings.warn(
            f"Could not find {what} key `{template}` in the following instance: {self.tokenizer.decode(input_ids)}. "
            "This instance will be ignored in loss calculation. Note, if this happens often, consider increasing "
            "the `max_length`.",
            UserWarning,
            stacklevel=3,
        )

    def torch_call(self, examples: list[Any]) -> dict[str, Any]:
        if examples and isinstance(examples[0], Mapping) and "labels" in examples[0]:
            # the labels are rebuilt from input_ids below (TRL 0.19 overwrote them too); TRL >= 0.20's SFTTrainer
            # adds a ragged `labels` column that the tokenizer's pad() cannot stack, so it is dropped first
            examples = [{k: v for k, v in e.items() if k != "labels"} for e in examples]
        batch = super().torch_call(examples)
        for i in range(len(examples)):
            if self.instruction_template is None:
                self._mask_single_turn(batch, i)
            else:
                self._mask_multi_turn(batch, i)
        if self.padding_free:
            self._flatten(batch)
        return batch

    def _mask_single_turn(self, batch: dict[str, Any], i: int) -> None:
        labels = batch["labels"]
        starts = _starts(labels[i], self.response_token_ids)
        if not starts:
            self._not_found("response", self.response_template, batch["input_ids"][i])
            labels[i, :] = self.ignore_index
            return
        labels[i, : starts[-1] + len(self.response_token_ids)] = self.ignore_index

    def _mask_multi_turn(self, batch: dict[str, Any], i: int) -> None:
        labels = batch["labels"]
        response_ends = [s + len(self.response_token_ids) for s in _starts(labels[i], self.response_token_ids)]
        if not response_ends:
            self._not_found("response", self.response_template, batch["input_ids"][i])
            labels[i, :] = self.ignore_index
        instruction_starts = _starts(labels[i], self.instruction_token_ids)
        if not instruction_starts:
            self._not_found("instruction", self.instruction_template, batch["input_ids"][i])
            labels[i, :] = self.ignore_index
        if instruction_starts and response_ends and instruction_starts[0] > response_ends[0]:
            instruction_starts = [0, *instruction_starts]
        for turn, (start, end) in enumerate(zip(instruction_starts, response_ends)):
            labels[i, (0 if turn == 0 else start): end] = self.ignore_index
        if len(response_ends) < len(instruction_starts):
            labels[i, instruction_starts[-1]:] = self.ignore_index

    def _flatten(self, batch: dict[str, Any]) -> None:
        attention_mask = batch.pop("attention_mask")
        keep = attention_mask.bool()
        batch["input_ids"] = batch["input_ids"][keep].unsqueeze(0)
        batch["position_ids"] = attention_mask.cumsum(1)[keep].unsqueeze(0) - 1
        batch["labels"] = batch["labels"][keep].unsqueeze(0)
        batch["labels"][batch["position_ids"] == 0] = self.ignore_index
        flat = batch["position_ids"].flatten()
        starts = torch.arange(flat.size(0), device=flat.device, dtype=torch.int32)[flat == 0]
        total = torch.tensor(flat.size(), device=flat.device, dtype=torch.int32)
        batch["cu_seq_lens_q"] = torch.cat((starts, total)).unsqueeze(0)
        batch["cu_seq_lens_k"] = batch["cu_seq_lens_q"]
        batch["max_length_k"] = torch.tensor([flat.max().item() + 1])
        batch["max_length_q"] = batch["max_length_k"]


class _Shared:
    """Holds the dataset for the `datasets` examples iterable; copies (datasets deep-copies it) share the object."""

    def __init__(self, owner: ConstantLengthDataset) -> None:
        self.owner = owner

    def __copy__(self) -> _Shared:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> _Shared:
        return self


def _generate(source: _Shared) -> Iterator[tuple[int, dict[str, list[int]]]]:
    for key, block in enumerate(source.owner._blocks()):
        yield key, {"input_ids": block, "labels": list(block)}


class ConstantLengthDataset(datasets.IterableDataset, TorchIterableDataset):
    """TRL 0.19.1's packing dataset: texts tokenized in buffers, joined by an EOS and cut into `seq_length` blocks.

    Iterating reads examples into a buffer until it holds about `seq_length * chars_per_token * num_of_sequences`
    characters (`seq_length * num_of_sequences` tokens when the dataset already has `input_ids`), shuffles the
    buffer (`shuffle=True`, Python's `random`), tokenizes it (`add_special_tokens`, no truncation), appends the
    concat token (the tokenizer's EOS id, `eos_token_id` when that is falsy) after each text
    (`append_concat_token`), cuts the stream into blocks of exactly `seq_length` tokens (the remainder of each buffer
    is dropped), shuffles the blocks and yields `{"input_ids": LongTensor, "labels": LongTensor}` (the same ids).
    `infinite=True` restarts the dataset when it ends. `formatting_func` wins over `dataset_text_field` (with a
    warning when both are given); one of them is required. `len()` is the number of rows of the underlying dataset.

    TRL's class raised IndexError when a finite dataset ended right after a full buffer (it tokenized an empty list,
    which fast tokenizers reject, seen on transformers 4.56.2 and 5.24.0); the copy ends the iteration there instead,
    after the same blocks. Differences from TRL's class, both so that
    TRL >= 0.20 trainers take it: it is also a `datasets.IterableDataset`
    with the features `input_ids` / `labels` (TRL 1.x `SFTTrainer` accepts only `datasets` datasets; it sees a
    tokenized dataset and does not tokenize again; what its `map` calls iterate are the same blocks as lists), and
    it is not a field-less `@dataclass` (TRL's made every two instances compare equal and the class unhashable).
    """

    def __init__(
        self,
        tokenizer: Any,
        dataset: Any,
        dataset_text_field: str | None = None,
        formatting_func: Callable[[Any], Any] | None = None,
        infinite: bool = False,
        seq_length: int = 1024,
        num_of_sequences: int = 1024,
        chars_per_token: float = 3.6,
        eos_token_id: int = 0,
        shuffle: bool = True,
        append_concat_token: bool = True,
        add_special_tokens: bool = True,
    ) -> None:
        features = datasets.Features({"input_ids": datasets.List(datasets.Value("int64")),
                                      "labels": datasets.List(datasets.Value("int64"))})
        super().__init__(datasets.iterable_dataset.ExamplesIterable(_generate, {"source": _Shared(self)}),
                         info=datasets.DatasetInfo(features=features))
        self.tokenizer = tokenizer
        self.concat_token_id = tokenizer.eos_token_id if tokenizer.eos_token_id else eos_token_id
        self.dataset = dataset
        self.seq_length = seq_length
        self.infinite = infinite
        self.current_size = 0
        self.max_buffer_size = seq_length * chars_per_token * num_of_sequences
        self.shuffle = shuffle  # shadows datasets' shuffle() method on the instance, as TRL's attribute did
        self.append_concat_token = append_concat_token
        self.add_special_tokens = add_special_tokens
        if dataset_text_field is not None and formatting_func is not None:
            warnings.warn(
                "Only one of `dataset_text_field` and `formatting_func` should be provided. Ignoring "
                "`dataset_text_field` and using `formatting_func`.",
                UserWarning,
                stacklevel=2,
            )
        if formatting_func is not None:
            self.formatting_func = formatting_func
        elif dataset_text_field is not None:
            self.formatting_func = lambda example: example[dataset_text_field]
        else:
            raise ValueError("Either `dataset_text_field` or `formatting_func` should be provided.")
        self.pretokenized = "input_ids" in _column_names(dataset)
        if self.pretokenized:  # the buffer then counts tokens, not characters
            self.max_buffer_size = seq_length * num_of_sequences

    def __len__(self) -> int:
        return len(self.dataset)

    def __iter__(self) -> Iterator[dict[str, torch.Tensor]]:
        for block in self._blocks():
            self.current_size += 1
            yield {"input_ids": torch.LongTensor(block), "labels": torch.LongTensor(block)}

    def _blocks(self) -> Iterator[list[int]]:
        iterator = iter(self.dataset)
        more = True
        while more:
            buffer: list[Any] = []
            size = 0
            while size < self.max_buffer_size:
                try:
                    buffer.append(self.formatting_func(next(iterator)))
                except StopIteration:
                    if not self.infinite:
                        more = False
                        break
                    iterator = iter(self.dataset)
                    continue
                size += len(buffer[-1])
            if self.shuffle:
                random.shuffle(buffer)
            if self.pretokenized or not buffer:
                # an empty buffer (the dataset ended right after a full one): TRL tokenized [], which the fast
                # tokenizers of transformers 4.56 and 5.x reject (IndexError); it holds no ids, so nothing is yielded
                token_lists = buffer
            else:
                token_lists = self.tokenizer(buffer, add_special_tokens=self.add_special_tokens,
                                             truncation=False)["input_ids"]
            stream: list[int] = []
            for ids in token_lists:
                stream.extend(ids)
                if self.append_concat_token:
                    stream.append(self.concat_token_id)
            blocks = [stream[k: k + self.seq_length] for k in range(0, len(stream), self.seq_length)]
            blocks = [b for b in blocks if len(b) == self.seq_length]
            if self.shuffle:  # again, so that the pieces of one long text do not come out next to each other
                random.shuffle(blocks)
            yield from blocks


def _column_names(dataset: Any) -> list[str]:
    """The columns of a `datasets.Dataset` / `IterableDataset` (TRL looked at these two types only), else none."""
    if isinstance(dataset, (datasets.Dataset, datasets.IterableDataset)):
        return list(dataset.column_names or [])
    return []
