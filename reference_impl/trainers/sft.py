"""Supervised fine-tuning: `SFTTrainer` and `SFTConfig`, drop-in for TRL 1.16's.

Datasets: language modelling (`text` or conversational `messages`), prompt/completion (standard or conversational),
or already tokenised (`input_ids`, optional `labels`). Standard text gets the EOS appended; conversations go through
the tokenizer's chat template. With a prompt/completion dataset the loss covers the completion only
(`completion_only_loss`, default on for that format).

Loss: `reference_impl.losses` `nll` (mean token negative log-likelihood) or `dft` (Dynamic Fine-Tuning, each token's
NLL weighted by its detached probability), computed by `reference_impl.scalar_loss.chunked_scalar_loss` (the 3-GEMM
path: gradients in the forward; it takes the per-token engine where that is more exact, see its module doc): the
lm_head never runs in full.
Logged metrics (TRL's names): `loss`, `entropy`, `mean_token_accuracy`, `num_tokens`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from transformers import TrainingArguments

from reference_impl.losses.sft import dft_loss, nll_loss

from . import _data
from ._base import _BaseTrainer, _coerce_args
from ._config import BaseConfig, option, unsupported
from ._model import forward_token_stats


@dataclass
class SFTConfig(BaseConfig):
    """TRL 1.16 `SFTConfig` fields; packing, padding-free, assistant-only loss and activation offloading are not
    implemented here (setting them raises `UnsupportedFieldError`)."""

    learning_rate: float = option(2e-5, "Initial AdamW learning rate.")
    router_aux_loss_coef: float | None = unsupported(None, "MoE auxiliary loss")
    chat_template_path: str | None = unsupported(None, "chat template cloning")
    dataset_text_field: str = option("text", "Column with the text of language-modelling datasets.")
    dataset_kwargs: dict | None = option(None, "Only `skip_prepare_dataset` is read.")
    dataset_num_proc: int | None = option(None, "Processes for dataset preparation.")
    eos_token: str | None = option(None, "EOS token to use instead of the tokenizer's.")
    max_length: int | None = option(1024, "Truncate tokenised sequences to this length.")
    truncation_mode: str = option("keep_start", "'keep_start' or 'keep_end'.")
    shuffle_dataset: bool = option(False, "Shuffle the prepared training dataset.")
    packing: bool = unsupported(False, "packing")
    packing_strategy: str = unsupported("bfd", "packing")
    padding_free: bool = unsupported(False, "padding-free batches")
    pad_to_multiple_of: int | str | None = option("auto", "Pad batches to a multiple of this ('auto': none).")
    eval_packing: bool | None = unsupported(None, "packing")
    completion_only_loss: bool | None = option(None, "Loss on completions only (default: prompt/completion data).")
    assistant_only_loss: bool = unsupported(False, "assistant-only masks from {% generation %} templates")
    loss_type: str = option("nll", "'nll' or 'dft'.")
    activation_offloading: bool = unsupported(False, "activation offloading")
    pad_token: str | None = option(None, "Padding token (default: the tokenizer's, else EOS).")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.loss_type not in ("nll", "dft"):
            raise ValueError(f"Invalid `loss_type` {self.loss_type!r}: expected 'nll' or 'dft'.")


class DataCollatorForLanguageModeling:
    """Right-pads `input_ids` (pad id), `labels` (-100) and builds `attention_mask`."""

    def __init__(self, pad_token_id: int, pad_to_multiple_of: int | None = None) -> None:
        self.pad_token_id = pad_token_id
        self.pad_to_multiple_of = pad_to_multiple_of

    def __call__(self, examples: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        ids = [e["input_ids"] for e in examples]
        labels = [e.get("labels", e["input_ids"]) for e in examples]
        m = self.pad_to_multiple_of
        return {
            "input_ids": _data.pad_lists(ids, self.pad_token_id, pad_to_multiple_of=m),
            "labels": _data.pad_lists(labels, -100, pad_to_multiple_of=m),
            "attention_mask": _data.pad_lists([[1] * len(i) for i in ids], 0, pad_to_multiple_of=m),
        }


class SFTTrainer(_BaseTrainer):
    """Supervised fine-tuning on the chunked engine. Same constructor as TRL 1.16's `SFTTrainer`."""

    _name = "SFT"
    _tag_names = ["sft"]

    def __init__(
        self,
        model: Any,
        args: SFTConfig | TrainingArguments | None = None,
        data_collator: Callable | None = None,
        train_dataset: Any = None,
        eval_dataset: Any = None,
        processing_class: Any = None,
        compute_loss_func: Callable | None = None,
        compute_metrics: Callable | None = None,
        callbacks: list | None = None,
        optimizers: tuple = (None, None),
        optimizer_cls_and_kwargs: tuple | None = None,
        preprocess_logits_for_metrics: Callable | None = None,
        quantization_config: Any = None,
        peft_config: Any = None,
        formatting_func: Callable[[dict], str] | None = None,
    ) -> None:
        args = _coerce_args(args, SFTConfig, model, "SFT")
        if compute_loss_func is not None:
            raise ValueError("`compute_loss_func` is not supported: it needs the full logits. Subclass and override "
                             "`compute_loss` instead.")
        if quantization_config is not None and not isinstance(model, str):
            raise ValueError("`quantization_config` only applies when `model` is a name or path.")
        if quantization_config is not None:
            args.model_init_kwargs = {**(args.model_init_kwargs or {}), "quantization_config": quantization_config}
        if train_dataset is None:
            raise ValueError("`train_dataset` is required")
        from transformers import set_seed

        set_seed(args.seed)  # PEFT initialises adapters randomly
        model = self._prepare_model(model, args, peft_config)
        processing_class = self._prepare_processing_class(processing_class, model, args)
        self._tokenizer = getattr(processing_class, "tokenizer", processing_class)
        if args.eos_token is not None:
            if args.eos_token not in self._tokenizer.get_vocab():
                raise ValueError(f"`eos_token` {args.eos_token!r} is not in the tokenizer's vocabulary.")
            self._tokenizer.eos_token = args.eos_token
        first = next(iter(train_dataset))
        self.completion_only_loss = (
            ("prompt" in first and "completion" in first) if args.completion_only_loss is None
            else args.completion_only_loss
        )
        if data_collator is None:
            data_collator = DataCollatorForLanguageModeling(self._tokenizer.pad_token_id, args.pad_to_multiple_of)
        skip = bool((args.dataset_kwargs or {}).get("skip_prepare_dataset", False))
        if not skip:
            train_dataset = self._prepare_dataset(train_dataset, args, formatting_func, "train")
            if eval_dataset is not None:
                if isinstance(eval_dataset, dict):
                    eval_dataset = {k: self._prepare_dataset(v, args, formatting_func, k) for k, v in eval_dataset.items()}
                else:
                    eval_dataset = self._prepare_dataset(eval_dataset, args, formatting_func, "eval")
        super().__init__(
            model=model,
            args=args,
            data_collator=data_collator,
            train_dataset=train_dataset,
            eval_dataset=eval_dataset,
            processing_class=processing_class,
            compute_metrics=compute_metrics,
            callbacks=callbacks,
            optimizers=optimizers,
            optimizer_cls_and_kwargs=optimizer_cls_and_kwargs,
            preprocess_logits_for_metrics=preprocess_logits_for_metrics,
        )
        self._total_train_tokens = 0

    # ------------------------------------------------------------------------------------------------------- data
    def _prepare_dataset(self, dataset: Any, args: SFTConfig, formatting_func: Callable | None, name: str) -> Any:
        tokenizer = self._tokenizer
        columns = _data.column_names(dataset)
        map_kwargs: dict[str, Any] = {"num_proc": args.dataset_num_proc} if hasattr(dataset, "num_rows") else {}
        if "input_ids" not in columns:
            if formatting_func is not None:
                if self.completion_only_loss:
                    raise ValueError("`formatting_func` makes a language-modelling dataset; it cannot be combined "
                                     "with `completion_only_loss=True`.")
                dataset = dataset.map(lambda ex: {"text": formatting_func(ex)}, **map_kwargs)
                columns = _data.column_names(dataset)
            _data.require_columns(
                columns, [(args.dataset_text_field,), ("messages",), ("prompt", "completion")], "SFTTrainer"
            )
            eos, text_field = tokenizer.eos_token, args.dataset_text_field
            completion_only = self.completion_only_loss

            def tokenize_fn(example: dict[str, Any]) -> dict[str, Any]:
                kwargs = _data.template_kwargs(example)
                if "prompt" in example:
                    if _data.is_conversational(example):
                        prompt_ids = _data.tokenize(tokenizer, example["prompt"], add_generation_prompt=True, **kwargs)
                        full = _data.tokenize(tokenizer, example["prompt"] + example["completion"], **kwargs)
                    else:
                        prompt_ids = _data.tokenize(tokenizer, example["prompt"])
                        full = _data.tokenize(tokenizer, example["prompt"] + _data.add_eos(example["completion"], eos))
                    n = _data.common_prefix_length(prompt_ids, full)
                    labels = [-100] * n + full[n:] if completion_only else list(full)
                    return {"input_ids": full, "labels": labels}
                if _data.is_conversational(example):
                    ids = _data.tokenize(tokenizer, example["messages"], **kwargs)
                else:
                    ids = _data.tokenize(tokenizer, _data.add_eos(example[text_field], eos))
                return {"input_ids": ids, "labels": list(ids)}

            dataset = dataset.map(tokenize_fn, remove_columns=columns, **map_kwargs)
        elif "labels" not in columns:
            dataset = dataset.map(lambda ex: {"labels": list(ex["input_ids"])}, **map_kwargs)
        if args.max_length is not None:
            mode, n = args.truncation_mode, args.max_length
            dataset = dataset.map(
                lambda ex: {"input_ids": _data.truncate(ex["input_ids"], n, mode),
                            "labels": _data.truncate(ex["labels"], n, mode)},
                **map_kwargs,
            )
            dataset = dataset.filter(lambda ex: any(x != -100 for x in ex["labels"]), **map_kwargs)
        if args.shuffle_dataset:
            dataset = dataset.shuffle(seed=args.seed)
        return dataset

    def _set_signature_columns_if_needed(self) -> None:
        if self._signature_columns is None:
            self._signature_columns = ["input_ids", "labels"]

    # ------------------------------------------------------------------------------------------------------- loss
    def compute_loss(
        self, model: Any, inputs: dict[str, torch.Tensor], return_outputs: bool = False, num_items_in_batch: Any = None
    ) -> Any:
        mode = self._mode
        if self._scalar_loss:
            # nll/dft with logging-only per-token outputs: the 3-GEMM path, gradients computed in the forward
            stats = self._scalar_loss_stats(model, inputs, num_items_in_batch)
            loss, mask = stats["loss"], stats["mask"]
        else:
            stats = forward_token_stats(
                model, inputs["input_ids"], inputs["attention_mask"], inputs["labels"],
                outputs=("logp", "entropy", "is_top1"),
            )
            mask = stats["mask"]
            loss_fn = dft_loss if self.args.loss_type == "dft" else nll_loss
            loss, _ = loss_fn(stats["logp"], mask, num_items_in_batch=num_items_in_batch)
        if self.args.average_tokens_across_devices and num_items_in_batch is not None:
            loss = loss * self.accelerator.num_processes

        num_valid = self.accelerator.gather_for_metrics(mask.sum()).sum()
        entropy = self.accelerator.gather_for_metrics(stats["entropy"].detach().sum()).sum()
        correct = self.accelerator.gather_for_metrics(stats["is_top1"].sum()).sum()
        self._metrics[mode]["entropy"].append((entropy / num_valid).item() if num_valid > 0 else 0.0)
        self._metrics[mode]["mean_token_accuracy"].append((correct / num_valid).item() if num_valid > 0 else 0.0)
        if mode == "train":
            self._total_train_tokens += self.accelerator.gather_for_metrics(inputs["attention_mask"].sum()).sum().item()
        self._metrics[mode]["num_tokens"] = [self._total_train_tokens]
        if return_outputs:
            return loss, {"loss": loss}
        return loss

    #: the loss through `reference_impl.scalar_loss` (3 GEMMs); False: per-token log-probs, then the loss (4 GEMMs)
    _scalar_loss = True

    def _scalar_loss_stats(self, model: Any, inputs: dict[str, torch.Tensor], num_items_in_batch: Any) -> dict:
        """`chunked_scalar_loss` inside the model's forward (the `engine_fn` protocol of `_model.add_engine_head`):
        `{"loss", "mask", "entropy", "is_top1"}` with `labels[:, 1:]` scored from `hidden[:, :-1]`."""
        from reference_impl.scalar_loss import chunked_scalar_loss

        from ._model import head_scaling, unwrap

        labels, loss_type = inputs["labels"], self.args.loss_type
        scale, softcap = head_scaling(unwrap(model).config)

        def fn(hidden: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> dict[str, torch.Tensor]:
            shift = labels[:, 1:].to(hidden.device)
            mask = shift != -100
            loss, out = chunked_scalar_loss(
                hidden[:, :-1][mask], weight, shift[mask], bias=bias, loss_type=loss_type,
                num_items_in_batch=num_items_in_batch, logit_scale=scale, softcap=softcap,
                outputs=("entropy", "argmax_correct"),
            )
            full = {k: v.new_zeros(mask.shape).masked_scatter(mask, v) for k, v in out.items()}
            return {"loss": loss, "mask": mask, "entropy": full["entropy"], "is_top1": full["argmax_correct"]}

        return model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"], engine_fn=fn)
