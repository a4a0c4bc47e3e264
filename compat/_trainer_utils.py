"""Copies of `trl.trainer.utils` helpers that no supported TRL line (1.13+) has, faithful to their last TRL body.

Served through `compat.trl` (`from compat.trl import batch_generation`); the migration `removed-trainer-utils`
points PPO-era imports here:

* `PeftSavingCallback` (removed in TRL 0.7.5): the 0.7.4 callback that saves the PEFT adapter of each checkpoint and
  deletes the full `pytorch_model.bin` the Trainer wrote beside it;
* `DPODataCollatorWithPadding` (`trl.trainer.utils` until 0.26; the same code from 0.8 to 0.26.2): the 0.26.2 class.
  TRL 0.27+ keeps it as `trl.experimental.utils.DPODataCollatorWithPadding` without the `label_pad_token_id` field
  (the label padding is fixed at -100 there), so code passing `label_pad_token_id=` needs this copy;
* `RewardDataCollatorWithPadding` (`trl.trainer.utils` until 0.26, no successor with its columns: 0.27's reward
  trainer collates `chosen_input_ids` / `rejected_input_ids`): the 0.8.6 - 0.11.4 class, which has the `max_length`
  field of 0.4 - 0.11 (later classes dropped it; `max_length=None`, its default, is what they did) and batches the
  optional `margin` column as 0.8 - 0.23 did (0.24 - 0.26's class cannot be built: a deprecation `__init__` under
  `@dataclass` passes the arguments to `object.__init__`);
* the PPOv2 / RLOO generation helpers `batch_generation`, `generate`, `forward`, `truncate_response`,
  `print_rich_table`: in `trl.trainer.utils` until 0.26, in `trl.experimental.ppo.ppo_trainer` from 0.27 to 1.12,
  gone in 1.13. Their bodies are the same in 0.26.2 and 1.12.0 (read from both wheels); these are those bodies, with
  the two helpers they call (`pad`, `first_true_indices`, 0.26.2) kept private here so that nothing depends on where
  the installed TRL keeps them; and `decode_and_strip_padding` (0.11 - 0.24, the reward trainer's sample printer;
  the 0.19.1 body).

* the PPO (v1) bookkeeping TRL dropped with its old `PPOTrainer`: the KL coefficient controllers
  `AdaptiveKLController` / `FixedKLController` (`trl.trainer.utils` until 0.13, the 0.13.0 classes), the `trl.core`
  statistics helpers `stack_dicts`, `stats_to_np`, `convert_to_scalar` (until 0.13, the 0.13.0 functions) and
  `PPODecorators` (until 0.23, the 0.23.1 class, with the members 0.7.4 renamed), and `RunningMoments` with `get_global_statistics`
  (`trl.trainer.utils` until 0.28, the 0.28.0 bodies), and the PPO-era trainer base `BaseTrainer`
  (`trl.trainer.base`, exported by `trl.trainer`, until 0.13: the 0.13.0 class; TRL 0.24 - 0.29's
  `trl.trainer.base_trainer.BaseTrainer` is another class, a `transformers.Trainer`, and is not this one);
* the on-policy trainers' state `OnlineTrainerState` (a `TrainerState` with an `episode` counter; the same dataclass
  in `trl.trainer.utils` from 0.10 to 0.26 and in `trl.experimental.ppo.ppo_trainer` from 0.27 to 1.12, gone in 1.13)
  and the old `prepare_deepspeed(model, per_device_train_batch_size, fp16=False, bf16=False)` (`trl.trainer.utils`
  from 0.9.2 to 1.0.0, the same code throughout; TRL 1.1 kept only `trl.models.utils.prepare_deepspeed(model,
  accelerator)`, which takes other arguments): the 1.0.0 bodies, for the projects that keep their own copy of
  TRL's PPOv2 / RLOO trainer;
* the PPOv2 / RLOO v1 configs, for projects that keep their own copy of those trainers: `OnPolicyConfig`
  (`trl.trainer.utils` 0.10 - 0.26, `trl.experimental.ppo` until 0.26) and `PPOv2Config` (0.9.2 - 0.12.2). Their
  fields changed once, in 0.11 (`sanity_check`, `non_eos_penalty`, `penalty_reward_value` and PPOv2's `base_model`,
  `num_updates` dropped; `missing_eos_penalty`, `dataset_num_proc`, `num_total_batches` added); every other field
  kept its default from the first release to the last (the atlas, held by a test). These copies have the fields of
  both lines with those defaults, so code written for either reads and sets what it did; the parser accepts the
  flags of both. `PPOConfig` is PPOv2Config's successor, TRL 0.12 - 1.12's Trainer-style PPO config (`trl.PPOConfig`
  0.12 - 0.28, `trl.experimental.ppo.PPOConfig` 0.26 - 1.12; the step-loop `trl.PPOConfig` of 0.11 and before is
  another class, not this one): PPOv2Config with the fields added from 0.13 on; `ClassicPPOConfig` is that step-loop
  config (0.4 - 0.11), for projects that keep their own copy of the PPOTrainer on `BaseTrainer`;
* `neftune_post_forward_hook` (`trl.trainer.utils`, also imported through `trl.trainer.sft_trainer`, 0.7.3 - 0.11.4,
  the same code throughout; transformers kept its own copy in `transformers.trainer_utils` only until 5.1): the
  0.11.4 function;
* two small helpers with no successor: `exact_div` (`trl.trainer.utils` until 0.26, `trl.experimental.ppo` until
  1.12: the 1.12.0 function, which also takes the 0.6 - 0.8 call form with the operand names) and `compute_accuracy`
  (the reward / PRM evaluation metric, `trl.trainer.utils` until 0.26, `trl.experimental.prm` until 1.13: the 1.13.0
  function).

This module imports torch and transformers (pandas and rich only inside `print_rich_table`); `compat.trl` imports it
only on first use of one of its names.
"""

from __future__ import annotations

import dataclasses
import gc
import importlib.util
import inspect
import json
import os
import sys
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import torch
from torch.nn.utils.rnn import pad_sequence
from huggingface_hub import PyTorchModelHubMixin
from transformers import (
    GenerationConfig,
    TrainerCallback,
    TrainerState,
    TrainingArguments,
    is_torch_npu_available,
    is_torch_xpu_available,
)
from transformers.utils import ModelOutput, is_rich_available

__all__ = [
    "AdaptiveKLController", "BaseTrainer", "DPODataCollatorWithPadding", "FixedKLController", "PPODecorators", "PeftSavingCallback",
    "RewardDataCollatorWithPadding", "RunningMoments", "batch_generation", "convert_to_scalar", "forward", "generate", "get_global_statistics",
    "print_rich_table", "stack_dicts", "stats_to_np", "truncate_response", "truncate_right", "decode_and_strip_padding",
    "compute_accuracy", "exact_div", "OnlineTrainerState", "prepare_deepspeed", "neftune_post_forward_hook",
    "OnPolicyConfig", "PPOv2Config", "PPOConfig", "ClassicPPOConfig",
]


class PeftSavingCallback(TrainerCallback):
    """TRL 0.4 - 0.7.4 `trl.trainer.utils.PeftSavingCallback`: at each save, `save_pretrained` the (PEFT) model into
    the checkpoint folder and remove the `pytorch_model.bin` there (the full weights the Trainer wrote)."""

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if args.should_save:
            checkpoint_path = os.path.join(args.output_dir, f"checkpoint-{state.global_step}")
            kwargs["model"].save_pretrained(checkpoint_path)

            if "pytorch_model.bin" in os.listdir(checkpoint_path):
                os.remove(os.path.join(checkpoint_path, "pytorch_model.bin"))


def _pad(tensors: list[torch.Tensor], padding_value: int = 0, padding_side: str = "right",
         pad_to_multiple_of: int | None = None) -> torch.Tensor:
    """TRL 0.26.2 `trl.trainer.utils.pad`: stack tensors padded to the largest shape along every dimension."""
    output_shape = np.max([t.shape for t in tensors], 0).tolist()
    if pad_to_multiple_of is not None:
        remainder = output_shape[0] % pad_to_multiple_of
        if remainder != 0:
            output_shape[0] += pad_to_multiple_of - remainder
    output = torch.full((len(tensors), *output_shape), padding_value, dtype=tensors[0].dtype, device=tensors[0].device)
    for i, t in enumerate(tensors):
        if padding_side == "left":
            seq_start = output_shape[0] - t.shape[0]
        elif padding_side == "right":
            seq_start = 0
        else:
            raise ValueError("padding_side must be 'left' or 'right'")
        seq_slice = slice(seq_start, seq_start + t.shape[0])
        slices = (seq_slice,) + tuple(slice(0, s) for s in t.shape[1:])
        output[i][slices] = t
    return output


def _first_true_indices(bools: torch.Tensor, dtype: torch.dtype = torch.long) -> torch.Tensor:
    """TRL 0.26.2 `trl.trainer.utils.first_true_indices`: index of the first True of each row (row length if none)."""
    row_len = bools.size(-1)
    zero_or_index = row_len * (~bools).type(dtype) + torch.arange(row_len, dtype=dtype, device=bools.device)
    return torch.min(zero_or_index, dim=-1).values


def generate(lm_backbone: torch.nn.Module, queries: torch.Tensor, pad_token_id: int,
             generation_config: GenerationConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """TRL 0.26.2 / 1.12.0 `generate`: generate without attending to the pad tokens of the (left-padded) queries;
    returns (queries + generated tokens, the stacked generation scores)."""
    context_length = queries.shape[1]
    attention_mask = queries != pad_token_id
    input_ids = torch.masked_fill(queries, ~attention_mask, 0)
    output = lm_backbone.generate(
        input_ids=input_ids,
        attention_mask=attention_mask,
        generation_config=generation_config,
        return_dict_in_generate=True,
        output_scores=True,
    )
    logits = torch.stack(output.scores, 1)
    return torch.cat((queries, output.sequences[:, context_length:]), dim=1), logits


def batch_generation(model: torch.nn.Module, queries: torch.Tensor, local_rollout_forward_batch_size: int,
                     pad_token_id: int, generation_config: GenerationConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """TRL 0.26.2 / 1.12.0 `batch_generation`: `generate` over chunks of `local_rollout_forward_batch_size` queries,
    the results right-padded (responses with `pad_token_id`, logits with 0) and concatenated."""
    query_responses = []
    logitss = []
    batch_size = queries.shape[0]
    for i in range(0, batch_size, local_rollout_forward_batch_size):
        query = queries[i : i + local_rollout_forward_batch_size]
        query_response, logits = generate(model, query, pad_token_id, generation_config)
        query_responses.append(query_response)
        logitss.append(logits)

    padded_query_responses = _pad(query_responses, padding_value=pad_token_id, padding_side="right")
    padded_logitss = _pad(logitss, padding_value=0, padding_side="right")

    padded_query_responses = padded_query_responses.view(-1, padded_query_responses.shape[-1])[:batch_size]
    padded_logitss = padded_logitss.view(-1, *padded_logitss.shape[2:])[:batch_size]
    return padded_query_responses, padded_logitss


def forward(model: torch.nn.Module, query_responses: torch.Tensor, pad_token_id: int) -> ModelOutput:
    """TRL 0.26.2 / 1.12.0 `forward`: the model on `query_responses` with pad tokens masked out and position ids
    counted over the real tokens; hidden states returned."""
    attention_mask = query_responses != pad_token_id
    position_ids = attention_mask.cumsum(1) - attention_mask.long()
    input_ids = torch.masked_fill(query_responses, ~attention_mask, 0)
    return model(
        input_ids=input_ids,
        attention_mask=attention_mask,
        position_ids=position_ids,
        return_dict=True,
        output_hidden_states=True,
    )


def truncate_response(stop_token_id: int, pad_token_id: int, responses: torch.Tensor) -> torch.Tensor:
    """TRL 0.26.2 / 1.12.0 `truncate_response`: every token after the first `stop_token_id` becomes `pad_token_id`."""
    trunc_idxs = _first_true_indices(responses == stop_token_id).unsqueeze(-1)
    new_size = [1] * (len(responses.size()) - 1) + [responses.shape[1]]
    idxs = torch.arange(responses.shape[1], device=responses.device).view(*new_size)
    return torch.masked_fill(responses, idxs > trunc_idxs, pad_token_id)


def truncate_right(input_ids: torch.Tensor, stop_token_id: int, pad_token_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """TRL 0.10 - 1.13 `truncate_right` (`trl.trainer.utils` until 0.26, `trl.experimental.utils` from 0.27; 1.16's
    takes a list of stop token ids): every token after the first `stop_token_id` becomes `pad_token_id`; returns
    (the truncated ids, a mask with 0 at those positions and 1 elsewhere)."""
    trunc_idxs = _first_true_indices(input_ids == stop_token_id).unsqueeze(-1)
    new_size = [1] * (len(input_ids.size()) - 1) + [input_ids.shape[1]]
    idxs = torch.arange(input_ids.shape[1], device=input_ids.device).view(*new_size)
    output_ids = torch.masked_fill(input_ids, idxs > trunc_idxs, pad_token_id)
    mask = torch.masked_fill(torch.ones_like(input_ids), idxs > trunc_idxs, 0)
    return output_ids, mask


def decode_and_strip_padding(inputs: torch.Tensor, tokenizer: Any) -> list[str]:
    """TRL 0.11 - 0.24 `decode_and_strip_padding` (`trl.trainer.utils`, also exported by `trl.trainer.reward_trainer`
    until 0.23; removed in 0.25 with no successor): decode each row with the special tokens kept, then delete every
    occurrence of the pad token's text. The 0.19.1 body."""
    decoded = tokenizer.batch_decode(inputs, skip_special_tokens=False)
    return [d.replace(tokenizer.pad_token, "") for d in decoded]


def print_rich_table(df: Any) -> None:
    """TRL 0.26.2 / 1.12.0 `print_rich_table`: print a pandas DataFrame as a `rich` table (one row per line)."""
    if not is_rich_available():
        raise ImportError(
            "The function `print_rich_table` requires the `rich` library. Please install it with `pip install rich`."
        )
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(show_lines=True)
    for column in df.columns:
        table.add_column(column)
    for _, row in df.iterrows():
        table.add_row(*row.astype(str).tolist())
    console.print(table)


_NO_PAD_TOKEN = ("Padding is enabled, but the tokenizer is not configured with a padding token. Explicitly set "
                 "`tokenizer.pad_token` (e.g. `tokenizer.pad_token = tokenizer.eos_token`) before calling the trainer.")


@dataclass
class DPODataCollatorWithPadding:
    """TRL 0.8 - 0.26.2 `trl.trainer.utils.DPODataCollatorWithPadding`: pads the tokenized DPO columns to the longest
    in the batch (`*_input_ids` with `pad_token_id`, `*_labels` with `label_pad_token_id`, masks and pixel values with
    0; the prompt columns on the left, the rest on the right), stacks `*_logps`, and lists every other column."""

    pad_token_id: int = 0
    label_pad_token_id: int = -100
    is_encoder_decoder: bool | None = False

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, Any]:
        padded_batch: dict[str, Any] = {}
        for k in features[0].keys():
            if k.endswith(("_input_ids", "_attention_mask", "_labels", "_pixel_values")):
                if self.is_encoder_decoder:
                    to_pad = [torch.LongTensor(ex[k]) for ex in features]

                    if (k.startswith("prompt")) and (k.endswith("input_ids")):
                        if self.pad_token_id is None:
                            raise ValueError(_NO_PAD_TOKEN)
                        padding_value = self.pad_token_id
                    elif k.endswith("_attention_mask"):
                        padding_value = 0
                    elif k.startswith(("chosen", "rejected", "completion")) or ("decoder" in k):
                        padding_value = self.label_pad_token_id
                    else:
                        raise ValueError(f"Unexpected key in batch '{k}'")
                    padded_batch[k] = pad_sequence(to_pad, batch_first=True, padding_value=padding_value)
                else:
                    if k.endswith("_input_ids"):
                        if self.pad_token_id is None:
                            raise ValueError(_NO_PAD_TOKEN)
                        padding_value = self.pad_token_id
                    elif k.endswith("_labels"):
                        padding_value = self.label_pad_token_id
                    elif k.endswith("_attention_mask"):
                        padding_value = 0
                    elif k.endswith("_pixel_values"):
                        padding_value = 0
                    else:
                        raise ValueError(f"Unexpected key in batch '{k}'")
                    padding_side = "left" if k in ["prompt_input_ids", "prompt_attention_mask"] else "right"
                    dtype = torch.float32 if k.endswith("_pixel_values") else torch.int64
                    to_pad = [torch.tensor(ex[k], dtype=dtype) for ex in features]
                    padded_batch[k] = _pad(to_pad, padding_value=padding_value, padding_side=padding_side)
            elif k.endswith("_logps"):
                padded_batch[k] = torch.tensor([ex[k] for ex in features])
            else:
                padded_batch[k] = [ex[k] for ex in features]
        return padded_batch


@dataclass
class RewardDataCollatorWithPadding:
    """TRL 0.8.6 - 0.11.4 `trl.trainer.utils.RewardDataCollatorWithPadding`: pads the chosen and the rejected
    sequences of a pairwise reward batch separately with `tokenizer.pad` (to the longest, or as `padding` /
    `max_length` / `pad_to_multiple_of` say), sets `return_loss=True`, and stacks the `margin` column when the
    features carry one."""

    tokenizer: Any
    padding: bool | str = True
    max_length: int | None = None
    pad_to_multiple_of: int | None = None
    return_tensors: str = "pt"

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, Any]:
        features_chosen = []
        features_rejected = []
        margin = []
        has_margin = "margin" in features[0]
        for feature in features:
            if (
                "input_ids_chosen" not in feature
                or "input_ids_rejected" not in feature
                or "attention_mask_chosen" not in feature
                or "attention_mask_rejected" not in feature
            ):
                raise ValueError(
                    "The features should include `input_ids_chosen`, `attention_mask_chosen`, `input_ids_rejected` "
                    "and `attention_mask_rejected`"
                )
            features_chosen.append({"input_ids": feature["input_ids_chosen"],
                                    "attention_mask": feature["attention_mask_chosen"]})
            features_rejected.append({"input_ids": feature["input_ids_rejected"],
                                      "attention_mask": feature["attention_mask_rejected"]})
            if has_margin:
                margin.append(feature["margin"])
        pad = {"padding": self.padding, "max_length": self.max_length, "pad_to_multiple_of": self.pad_to_multiple_of,
               "return_tensors": self.return_tensors}
        batch_chosen = self.tokenizer.pad(features_chosen, **pad)
        batch_rejected = self.tokenizer.pad(features_rejected, **pad)
        batch = {
            "input_ids_chosen": batch_chosen["input_ids"],
            "attention_mask_chosen": batch_chosen["attention_mask"],
            "input_ids_rejected": batch_rejected["input_ids"],
            "attention_mask_rejected": batch_rejected["attention_mask"],
            "return_loss": True,
        }
        if has_margin:
            batch["margin"] = torch.tensor(margin, dtype=torch.float)
        return batch


class AdaptiveKLController:
    """TRL 0.4 - 0.13 `trl.trainer.utils.AdaptiveKLController`: the adaptive KL coefficient of Ziegler et al. 2019
    (arXiv 1909.08593, eq. 2). `update(current, n_steps)` multiplies `value` by
    `1 + clip(current / target - 1, -0.2, 0.2) * n_steps / horizon`."""

    def __init__(self, init_kl_coef: float, target: float, horizon: float) -> None:
        self.value = init_kl_coef
        self.target = target
        self.horizon = horizon

    def update(self, current: float, n_steps: int) -> None:
        error = np.clip(current / self.target - 1, -0.2, 0.2)
        self.value *= 1 + error * n_steps / self.horizon


class FixedKLController:
    """TRL 0.4 - 0.13 `trl.trainer.utils.FixedKLController`: a KL coefficient `value` that `update` leaves as it is."""

    def __init__(self, kl_coef: float) -> None:
        self.value = kl_coef

    def update(self, current: float, n_steps: int) -> None:
        pass


_WANDB_PADDING = -1  # trl.core.WANDB_PADDING: the value stack_dicts pads the shorter statistics with


def stack_dicts(stats_dicts: list[dict]) -> dict:
    """TRL 0.4 - 0.13 `trl.core.stack_dicts`: for each key of the first dict, the values of every dict flattened and
    stacked into one `(len(stats_dicts), longest)` tensor, right-padded with -1."""
    return {key: pad_sequence([torch.flatten(d[key]) for d in stats_dicts], batch_first=True,
                              padding_value=_WANDB_PADDING) for key in stats_dicts[0]}


def stats_to_np(stats_dict: dict) -> dict:
    """TRL 0.13 `trl.core.stats_to_np`: tensors -> numpy arrays (detached, on the CPU, bfloat16 as float32); then
    every numpy/Python scalar -> a Python float. Other values are kept."""
    out = {}
    for key, value in stats_dict.items():
        if isinstance(value, torch.Tensor):
            value = value.detach().cpu()
            if value.dtype == torch.bfloat16:
                value = value.float()
            value = value.numpy()
        if np.isscalar(value):
            value = float(value)
        out[key] = value
    return out


def convert_to_scalar(stats: dict) -> dict:
    """TRL 0.4 - 0.13 `trl.core.convert_to_scalar`: a tensor or numpy array of shape `()` or `(1,)` -> `.item()`;
    other values are kept."""
    def scalar(value: Any) -> Any:
        if isinstance(value, (torch.Tensor, np.ndarray)) and (
                len(value.shape) == 0 or (len(value.shape) == 1 and value.shape[0] == 1)):
            return value.item()
        return value

    return {key: scalar(value) for key, value in stats.items()}


class PPODecorators:
    """TRL 0.4.1 - 0.23 `trl.core.PPODecorators` (the 0.23.1 class): `@PPODecorators.empty_device_cache()` runs the
    decorated function, then, when the class attribute `optimize_device_cache` is true (PPOTrainer set it from
    `PPOConfig.optimize_device_cache`), collects garbage and empties the XPU, NPU or CUDA cache (the first available).

    With the names it had until TRL 0.7.3 as well (the 0.7.2 members, which 0.7.4 renamed): `empty_cuda_cache()`
    empties the CUDA cache only, when `optimize_cuda_cache` is true. Each pair reads its own flag, as in the release
    that had it, so a copy of an old PPOTrainer and a new one both work as they did."""

    optimize_device_cache = False
    optimize_cuda_cache = False

    @classmethod
    @contextmanager
    def empty_cuda_cache(cls):  # type: ignore[no-untyped-def]
        yield
        if cls.optimize_cuda_cache and torch.cuda.is_available():
            gc.collect()
            torch.cuda.empty_cache()
            gc.collect()

    @classmethod
    @contextmanager
    def empty_device_cache(cls):  # type: ignore[no-untyped-def]
        yield
        if not cls.optimize_device_cache:
            return
        if is_torch_xpu_available():
            empty = torch.xpu.empty_cache
        elif is_torch_npu_available():
            empty = torch.npu.empty_cache
        elif torch.cuda.is_available():
            empty = torch.cuda.empty_cache
        else:
            return
        gc.collect()
        empty()
        gc.collect()


@torch.no_grad()
def get_global_statistics(accelerator: Any, xs: torch.Tensor, mask: torch.Tensor | None = None,
                          device: Any = "cpu") -> tuple[torch.Tensor, torch.Tensor, int]:
    """TRL 0.6 - 0.28 `trl.trainer.utils.get_global_statistics`: the mean and (biased) variance of `xs` over every
    process (`accelerator.reduce` sums), weighted by `mask` when given, and the element count."""
    xs = xs.to(accelerator.device)
    count = xs.numel() if mask is None else mask.sum()
    global_sum, count = accelerator.reduce(torch.tensor([xs.sum(), count], device=xs.device))
    global_mean = global_sum / count
    sum_var = accelerator.reduce(torch.sum(((xs - global_mean) ** 2).mul(1 if mask is None else mask)))
    return global_mean.to(device), (sum_var / count).to(device), count.item()


@dataclass
class RunningMoments:
    """TRL 0.6 - 0.28 `trl.trainer.utils.RunningMoments` (the 0.28.0 class): running mean and standard deviation of a
    stream, merged batch by batch (Chan et al.'s parallel variance; over every process when distributed)."""

    accelerator: Any
    mean: float = 0
    std: float = 1
    var: float = 1
    count: float = 1e-24

    @torch.no_grad()
    def update(self, xs: torch.Tensor) -> tuple[float, float]:
        """Merge the batch `xs` into the moments; returns the batch's mean and unbiased standard deviation.

        The update rule is reference_impl's `RunningMoments` (BCO's baseline: the same arithmetic as TRL's, written
        once), fed the global statistics over every process when the accelerator is distributed."""
        from reference_impl.losses.unpaired import RunningMoments as Moments

        reduce = (lambda t: get_global_statistics(self.accelerator, t)) if self.accelerator.use_distributed else None
        moments = Moments(self.mean, self.std, self.var, self.count, reduce)
        batch = moments.update(xs)
        self.mean, self.std, self.var, self.count = moments.mean, moments.std, moments.var, moments.count
        return batch

    def save_to_json(self, json_path: str) -> None:
        """Write the moments (not the accelerator) as JSON, on the main process only."""
        if self.accelerator.is_main_process:
            state = dataclasses.asdict(self, dict_factory=lambda x: {k: v for (k, v) in x if k != "accelerator"})
            with open(json_path, "w", encoding="utf-8") as f:
                f.write(json.dumps(state, indent=2, sort_keys=True) + "\n")

    @classmethod
    def load_from_json(cls, accelerator: Any, json_path: str) -> RunningMoments:
        """The moments saved by `save_to_json`, with `accelerator`."""
        with open(json_path, encoding="utf-8") as f:
            return cls(accelerator=accelerator, **json.loads(f.read()))


class BaseTrainer(PyTorchModelHubMixin):
    """TRL 0.4 - 0.13 `trl.trainer.BaseTrainer` (`trl.trainer.base`, the 0.13.0 class): the base of the PPO-era
    trainers (PPOTrainer, DDPOTrainer), a Hub mixin that keeps `config` and leaves `step`, `loss`,
    `compute_rewards` and `_save_pretrained` to the subclass (each raises NotImplementedError here)."""

    def __init__(self, config: Any) -> None:
        self.config = config

    def step(self, *args: Any) -> Any:
        raise NotImplementedError("Not implemented")

    def loss(self, *args: Any) -> Any:
        raise NotImplementedError("Not implemented")

    def compute_rewards(self, *args: Any) -> Any:
        raise NotImplementedError("Not implemented")

    def _save_pretrained(self, save_directory: Any) -> None:
        raise NotImplementedError("Not implemented")


def _exact_quotient(a: Any, b: Any, detail: str) -> Any:
    """`a // b`, or ValueError (`detail` then the division) when `b` does not divide `a`."""
    quotient = a // b
    if quotient * b != a:
        raise ValueError(f"{detail}, inexact division: {a} / {b} = {a / b}")
    return quotient


def _exact_div_0_9(a: Any, b: Any, custom_error_message: str = "") -> Any:
    """The 0.9.2 - 1.12.0 signature (`trl.trainer.utils`, then `trl.experimental.ppo.ppo_trainer`)."""
    return _exact_quotient(a, b, custom_error_message)


def _exact_div_0_6(a: Any, b: Any, a_str: str, b_str: str, custom_error_message: str = "") -> Any:
    """The 0.6 - 0.8.6 signature: the operands' names go into the message too."""
    return _exact_quotient(a, b, f"{custom_error_message}, {a_str}={a}, {b_str}={b}")


_EXACT_DIV_0_9 = inspect.signature(_exact_div_0_9)


def exact_div(*args: Any, **kwargs: Any) -> Any:
    """TRL `exact_div`: `a // b` when `b` divides `a`, else ValueError naming the inexact division.

    TRL 0.9.2 - 1.12.0 take `exact_div(a, b, custom_error_message="")`; TRL 0.6 - 0.8.6 took
    `exact_div(a, b, a_str, b_str, custom_error_message="")`. No call is valid for both signatures (0.6's needs four
    arguments or `a_str=` / `b_str=`, 0.9's takes at most three), so each call runs the release whose signature it
    fits, with that release's error message; a call that fits neither raises 0.6's TypeError."""
    try:
        _EXACT_DIV_0_9.bind(*args, **kwargs)
    except TypeError:
        return _exact_div_0_6(*args, **kwargs)
    return _exact_div_0_9(*args, **kwargs)


def compute_accuracy(eval_pred: Any) -> dict[str, float]:
    """TRL 0.25 - 1.13 `compute_accuracy` (`trl.trainer.utils`, then `trl.experimental.prm.prm_trainer`; the 1.13.0
    function), the reward / PRM trainers' default metric on `(predictions, labels)`:

    * predictions of shape `(batch, seq, classes)` (PRM): the argmax class of each token whose label is not -100
      against that label;
    * else `(batch, 2)` rewards (chosen, rejected) against labels `(batch,)`: rows where both rewards are equal are
      left out (with a warning saying how many), the others' argmax compared with the label.

    Returns `{"accuracy": the share of matches}` (NaN when nothing is left). TRL 0.4.2 - 0.12 counted the tied rows
    too (argmax 0); TRL 0.13 - 0.24 are this function (warning through `warnings` before 0.22)."""
    predictions, labels = eval_pred
    if predictions.ndim == 3:
        kept = [(p, lbl) for row, row_labels in zip(np.argmax(predictions, axis=2), labels, strict=True)
                for p, lbl in zip(row, row_labels, strict=True) if lbl != -100]
        predictions = np.array([p for p, _ in kept])
        labels = np.array([lbl for _, lbl in kept])
    else:
        tied = predictions[:, 0] == predictions[:, 1]
        n_tied = int(tied.sum())
        if n_tied > 0:
            from accelerate import PartialState
            from accelerate.logging import get_logger

            PartialState()  # accelerate's logger needs the state (a Trainer has made it; a bare call may not have)
            get_logger(__name__).warning(
                f"There are {n_tied} out of {len(predictions[:, 0])} instances where the predictions for both "
                "options are equal. These instances are ignored in the accuracy computation.")
        predictions = np.argmax(predictions[~tied], axis=1)
        labels = labels[~tied]
    return {"accuracy": np.array(predictions == labels, dtype=float).mean().item()}


@dataclass
class OnlineTrainerState(TrainerState):
    """TRL 0.10 - 1.12 `OnlineTrainerState` (`trl.trainer.utils` until 0.26, `trl.experimental.ppo.ppo_trainer` from
    0.27; the same dataclass throughout): the `transformers.TrainerState` of the PPOv2 / RLOO trainers, with the
    zero-based index of the current rollout episode."""

    episode: int = 0


def prepare_deepspeed(model: torch.nn.Module, per_device_train_batch_size: int, fp16: bool = False,
                      bf16: bool = False) -> torch.nn.Module:
    """TRL 0.9.2 - 1.0.0 `trl.trainer.utils.prepare_deepspeed` (the same code in every release that had it): wrap a
    frozen model (a reference or reward model) in a DeepSpeed engine for inference beside the trained one.

    The DeepSpeed config is the Accelerator's (`AcceleratorState().deepspeed_plugin`). Under ZeRO-1/2 the model gets
    a fresh minimal config: `train_micro_batch_size_per_gpu` (also written into the plugin's config, as TRL did),
    no gradient prescaling, and bf16 or fp16 as asked. Under ZeRO-3 the plugin's own config is used, with the bucket
    sizes set from the model's hidden size (written into the plugin's config too). The engine is returned in eval
    mode. TRL 1.1+ has `trl.models.utils.prepare_deepspeed(model, accelerator)` instead, which reads the precision
    from the accelerator."""
    import deepspeed
    from accelerate.state import AcceleratorState

    deepspeed_plugin = AcceleratorState().deepspeed_plugin
    config_kwargs = deepspeed_plugin.deepspeed_config
    if config_kwargs["zero_optimization"]["stage"] != 3:
        config_kwargs["train_micro_batch_size_per_gpu"] = per_device_train_batch_size
        config_kwargs = {
            "train_micro_batch_size_per_gpu": config_kwargs["train_micro_batch_size_per_gpu"],
            "prescale_gradients": False,
            "wall_clock_breakdown": False,
        }
        if bf16:
            config_kwargs["bf16"] = {"enabled": True}
        elif fp16:
            config_kwargs["fp16"] = {"enabled": True}
    else:
        if hasattr(model, "config"):
            hidden_size = (
                max(model.config.hidden_sizes)
                if getattr(model.config, "hidden_sizes", None)
                else getattr(model.config, "hidden_size", None)
            )
            if hidden_size is not None and config_kwargs["zero_optimization"]["stage"] == 3:
                # TRL's note: stage3_prefetch_bucket_size 0 can make DeepSpeed print "Invalidate trace cache @ step 0:
                # expected module 1, but got module 0"; that is expected, not an error
                config_kwargs.update(
                    {
                        "zero_optimization.reduce_bucket_size": hidden_size * hidden_size,
                        "zero_optimization.stage3_param_persistence_threshold": 10 * hidden_size,
                        "zero_optimization.stage3_prefetch_bucket_size": 0,
                    }
                )
    model, *_ = deepspeed.initialize(model=model, config=config_kwargs)
    model.eval()
    return model


def neftune_post_forward_hook(module: torch.nn.Module, input: Any, output: torch.Tensor) -> torch.Tensor:
    """TRL 0.7.3 - 0.11.4 `trl.trainer.utils.neftune_post_forward_hook` (the same code throughout): NEFTune's noise
    (Jain et al., 2023), a forward hook on an embedding layer. In training mode the embeddings get uniform noise in
    `[-alpha / sqrt(L * d), alpha / sqrt(L * d)]` (L the sequence length, d the embedding size, alpha
    `module.neftune_noise_alpha`); in eval mode they pass unchanged. Use: `embed.neftune_noise_alpha = 5.0;
    embed.register_forward_hook(neftune_post_forward_hook)`."""
    if module.training:
        dims = torch.tensor(output.size(1) * output.size(2))
        mag_norm = module.neftune_noise_alpha / torch.sqrt(dims)
        output = output + torch.zeros_like(output).uniform_(-mag_norm, mag_norm)
    return output


@dataclass
class OnPolicyConfig(TrainingArguments):
    """TRL 0.10 - 0.26 `trl.trainer.utils.OnPolicyConfig` (0.9's `OnpolicyRuntimeConfig` fields included): the base
    config of the PPOv2 and RLOO v1 trainers. The batch sizes below `world_size` are filled in by the trainer.

    The fields of 0.11 - 0.26 (the same defaults throughout), then the three that 0.11 dropped, with their 0.9 - 0.10
    defaults. `world_size` is a field here, as in TRL, hiding `TrainingArguments.world_size` until the trainer sets
    it."""

    run_name: str | None = None
    dataset_num_proc: int | None = None
    num_mini_batches: int = 1
    total_episodes: int | None = None
    local_rollout_forward_batch_size: int = 64
    num_sample_generations: int = 10
    response_length: int = 53
    stop_token: Literal["eos"] | None = None
    stop_token_id: int | None = None
    temperature: float = 0.7
    missing_eos_penalty: float | None = None
    sft_model_path: str = "EleutherAI/pythia-160m"
    world_size: int | None = None
    num_total_batches: int | None = None
    micro_batch_size: int | None = None
    local_batch_size: int | None = None
    batch_size: int | None = None
    local_mini_batch_size: int | None = None
    mini_batch_size: int | None = None
    # TRL 0.9 - 0.10 only
    sanity_check: bool = False
    penalty_reward_value: int = -1
    non_eos_penalty: bool = False


@dataclass
class PPOv2Config(OnPolicyConfig):
    """TRL 0.9.2 - 0.12.2 `PPOv2Config` (`trl.trainer.ppov2_config`; 0.12 kept it as an alias of the new `PPOConfig`):
    the PPOv2 trainer's config, for projects that keep their own copy of that trainer.

    `exp_name` defaults to what 0.9 - 0.11 computed, the name of TRL's module (`ppov2_config`); 0.12's alias said
    `ppo_config`. `base_model` and `num_updates` are 0.9 - 0.10's."""

    exp_name: str = "ppov2_config"
    reward_model_path: str = "EleutherAI/pythia-160m"
    num_ppo_epochs: int = 4
    whiten_rewards: bool = False
    kl_coef: float = 0.05
    cliprange: float = 0.2
    vf_coef: float = 0.1
    cliprange_value: float = 0.2
    gamma: float = 1.0
    lam: float = 0.95
    # TRL 0.9 - 0.10 only
    base_model: str = "EleutherAI/pythia-160m"
    num_updates: int | None = None


@dataclass
class PPOConfig(PPOv2Config):
    """TRL 0.12 - 1.12's Trainer-style `PPOConfig` (`trl.PPOConfig` 0.12 - 0.28, `trl.experimental.ppo.PPOConfig`
    0.26 - 1.12), for projects that keep their own copy of that trainer; not the step-loop `PPOConfig` of TRL 0.11
    and before, which is another class.

    PPOv2Config's fields, with `exp_name` as these releases computed it (`ppo_config`, their module's name), and the
    fields added from 0.13 on, each with the default it had in every release that had it (the atlas, held by a
    test). The TrainingArguments fields later releases gave other defaults keep transformers' here: 0.19 - 1.12 log
    every 10 steps (`logging_steps=10`), 0.29 - 1.12 train at `learning_rate=3e-6`."""

    exp_name: str = "ppo_config"
    model_adapter_name: str | None = None  # 0.13 -
    ref_adapter_name: str | None = None  # 0.13 -
    ds3_gather_for_generation: bool = True  # 0.14 -
    kl_estimator: Literal["k1", "k3"] = "k1"  # 0.17 -


@dataclass
class ClassicPPOConfig:
    """TRL 0.4 - 0.11's step-loop `trl.PPOConfig` (the config of the PPOTrainer on `BaseTrainer`; TRL 0.12 gave the
    name to the Trainer-style config, `PPOConfig` above), for projects that keep their own copy of that trainer.

    The fields and defaults of 0.11.4, and its `__post_init__` without the deprecation warning: `forward_batch_size`
    overrides `mini_batch_size`; `backward_batch_size = mini_batch_size * gradient_accumulation_steps` must divide
    `batch_size` (0.5 on; 0.4's trainer computed it itself); `log_with="wandb"` needs wandb installed;
    `total_ppo_epochs = ceil(steps / batch_size)`. `to_dict()` flattens nested dicts with "/". Defaults that releases
    before 0.7.11 had otherwise (`batch_size` 256, `mini_batch_size` 1, `learning_rate` 1e-5, `target_kl` 0.1 before
    0.7.2, `model_name` / `query_dataset` / `reward_model` None): the migration writes them out where the project's
    pin says the code ran on such a release (rule `ppo-to-grpo`)."""

    exp_name: str = os.path.basename(sys.argv[0])[: -len(".py")]
    seed: int = 0
    log_with: Literal["wandb", "tensorboard"] | None = None
    task_name: str | None = None
    model_name: str = "gpt2"
    query_dataset: str = "stanfordnlp/imdb"
    reward_model: str = "sentiment-analysis:lvwerra/distilbert-imdb"
    remove_unused_columns: bool = True
    tracker_kwargs: dict | None = dataclasses.field(default_factory=dict)
    accelerator_kwargs: dict | None = dataclasses.field(default_factory=dict)
    project_kwargs: dict | None = dataclasses.field(default_factory=dict)
    tracker_project_name: str = "trl"
    push_to_hub_if_best_kwargs: dict | None = dataclasses.field(default_factory=dict)
    steps: int = 20000
    learning_rate: float = 1.41e-5
    adap_kl_ctrl: bool = True
    init_kl_coef: float | None = 0.2
    kl_penalty: Literal["kl", "abs", "mse", "full"] = "kl"
    target: float | None = 6.0
    horizon: float | None = 10000.0
    gamma: float = 1.0
    lam: float = 0.95
    cliprange: float = 0.2
    cliprange_value: float = 0.2
    vf_coef: float = 0.1
    batch_size: int = 128
    forward_batch_size: int | None = None
    mini_batch_size: int = 128
    gradient_accumulation_steps: int = 1
    world_size: int | None = None
    ppo_epochs: int = 4
    max_grad_norm: float | None = None
    optimize_cuda_cache: bool | None = None
    optimize_device_cache: bool | None = False
    early_stopping: bool = False
    target_kl: float = 1.0
    compare_steps: int = 1
    ratio_threshold: float = 10.0
    use_score_scaling: bool = False
    use_score_norm: bool = False
    score_clip: float | None = None
    whiten_rewards: bool = False
    gradient_checkpointing: bool = False
    is_encoder_decoder: bool | None = None
    is_peft_model: bool | None = None
    backward_batch_size: int | None = None
    global_backward_batch_size: int | None = None
    global_batch_size: int | None = None
    dataset_num_proc: int | None = None

    def __post_init__(self) -> None:
        if self.forward_batch_size is not None:
            warnings.warn(
                "Note that using `forward_batch_size` is deprecated, use `mini_batch_size` instead. By setting it you "
                "overwrite `mini_batch_size` which affects both the batch size during forward passes and also the "
                "mini batch size for PPO optimization.", stacklevel=2)
            self.mini_batch_size = self.forward_batch_size
        self.backward_batch_size = self.mini_batch_size * self.gradient_accumulation_steps
        exact_div(self.batch_size, self.backward_batch_size,
                  "`batch_size` must be a multiple of `mini_batch_size * gradient_accumulation_steps`")
        if self.log_with == "wandb" and importlib.util.find_spec("wandb") is None:
            raise ImportError("Please install wandb to use wandb logging. You can do this by running `pip install wandb`.")
        self.total_ppo_epochs = int(np.ceil(self.steps / self.batch_size))
        assert self.kl_penalty in ["kl", "abs", "mse", "full"]  # noqa: S101 - TRL's own check

    def to_dict(self) -> dict[str, Any]:
        flat: dict[str, Any] = {}

        def recurse(nest: dict[str, Any], prefix: str) -> None:
            for k, v in nest.items():
                if "/" in k:
                    raise ValueError(f"separator '/' not allowed to be in key '{k}'")
                if isinstance(v, dict):
                    recurse(v, prefix + k + "/")
                else:
                    flat[prefix + k] = v

        recurse(dict(self.__dict__), "")
        return flat
