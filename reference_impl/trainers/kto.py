"""Kahneman-Tversky Optimization: `KTOTrainer` and `KTOConfig`, drop-in for TRL 1.16's.

Datasets: unpaired preference data `prompt`/`completion`/`label` (bool: desirable), standard or conversational;
paired `prompt`/`chosen`/`rejected` data is unpaired first (each pair gives one desirable and one undesirable row).

The KL reference point `z0` is estimated, as in the paper and TRL, from mismatched prompt/completion pairs: within
each batch of `per_device_train_batch_size` rows the completions are rotated by one, so the training sampler is
sequential (the rotation was built batch by batch). The loss is `reference_impl.losses.unpaired.kto_loss`
(`kto` or `apo_zero_unpaired`, desirable/undesirable weights) on sequence log-probs from the chunked engine.
Logged metrics (TRL's names): `kl`, `rewards/{chosen,rejected,margins}`, `logps/{chosen,rejected}`,
`logits/{chosen,rejected}`, `entropy`, `num_tokens`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils.data import SequentialSampler

from reference_impl.losses.unpaired import KTO_LOSS_TYPES, kto_loss

from . import _data, _model
from ._base import _BaseTrainer, _coerce_args
from ._config import BaseConfig, option, unsupported


@dataclass
class KTOConfig(BaseConfig):
    """TRL 1.16 `KTOConfig` fields; `sync_ref_model` and activation offloading are not implemented."""

    learning_rate: float = option(1e-6, "Initial AdamW learning rate.")
    router_aux_loss_coef: float | None = unsupported(None, "MoE auxiliary loss")
    disable_dropout: bool = option(True, "Disable dropout in the policy and reference.")
    dataset_num_proc: int | None = option(None, "Processes for dataset preparation.")
    max_length: int | None = option(1024, "Truncate prompt+completion to this length.")
    pad_to_multiple_of: int | str | None = option("auto", "Pad batches to a multiple of this ('auto': none).")
    precompute_ref_log_probs: bool = option(False, "Score the dataset with the reference once before training.")
    precompute_ref_batch_size: int | None = option(None, "Batch size of the precomputation.")
    train_sampling_strategy: str = option("sequential", "Training sampler; the KL completions need 'sequential'.")
    loss_type: str = option("kto", f"One of {KTO_LOSS_TYPES}.")
    beta: float = option(0.1, "KL-regularisation strength.")
    desirable_weight: float = option(1.0, "Weight of the desirable examples' losses.")
    undesirable_weight: float = option(1.0, "Weight of the undesirable examples' losses.")
    activation_offloading: bool = unsupported(False, "activation offloading")
    sync_ref_model: bool = unsupported(False, "TR-DPO reference syncing")
    ref_model_mixup_alpha: float = unsupported(0.6, "TR-DPO reference syncing")
    ref_model_sync_steps: int = unsupported(512, "TR-DPO reference syncing")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.loss_type not in KTO_LOSS_TYPES:
            raise ValueError(f"Unknown KTO loss_type {self.loss_type!r}; expected one of {KTO_LOSS_TYPES}.")


def unpair_preference_dataset(dataset: Any, **map_kwargs: Any) -> Any:
    """Paired `chosen`/`rejected` rows -> unpaired `completion`/`label` rows (TRL's batching order)."""

    def unpair(batch: dict[str, list]) -> dict[str, list]:
        n = len(batch["chosen"])
        out = {"completion": batch["chosen"] + batch["rejected"], "label": [True] * n + [False] * n}
        for k, v in batch.items():
            if k not in ("chosen", "rejected"):
                out[k] = v + v
        return out

    return dataset.map(unpair, batched=True, remove_columns=_data.column_names(dataset), **map_kwargs)


def prepare_unpaired_dataset(dataset: Any, tokenizer: Any, args: Any, trainer: str, kl_batch: int | None) -> Any:
    """Tokenise unpaired data into `prompt_ids`/`completion_ids` (+ `KL_completion_ids` rotated per `kl_batch`)."""
    columns = _data.column_names(dataset)
    _data.require_columns(
        columns, [("prompt", "completion", "label"), ("prompt", "chosen", "rejected"), ("chosen", "rejected")], trainer
    )
    map_kwargs: dict[str, Any] = {"num_proc": args.dataset_num_proc} if hasattr(dataset, "num_rows") else {}
    if "prompt" not in columns:
        dataset = dataset.map(_data.extract_prompt, **map_kwargs)
    if "chosen" in _data.column_names(dataset):
        dataset = unpair_preference_dataset(dataset, **map_kwargs)

    def tokenize_fn(example: dict[str, Any]) -> dict[str, Any]:
        out = _data.tokenize_prompt_completions(example, tokenizer, ("completion",))
        return {"prompt_ids": out["prompt_ids"], "completion_ids": out["completion_ids"]}

    dataset = dataset.map(tokenize_fn, **map_kwargs)
    if args.max_length is not None:
        dataset = dataset.filter(lambda ex: len(ex["prompt_ids"]) < args.max_length, **map_kwargs)
    if kl_batch:
        def rotate(batch: dict[str, list]) -> dict[str, list]:
            batch["KL_completion_ids"] = [batch["completion_ids"][-1]] + batch["completion_ids"][:-1]
            return batch

        dataset = dataset.map(rotate, batched=True, batch_size=kl_batch, **map_kwargs)
    return dataset


class DataCollatorForUnpairedPreference:
    """Right-padded `input_ids`/`attention_mask`/`completion_mask` (and `KL_*` twins), `label` as a bool tensor."""

    def __init__(self, pad_token_id: int, max_length: int | None = None, pad_to_multiple_of: int | None = None) -> None:
        self.pad_token_id, self.max_length, self.pad_to_multiple_of = pad_token_id, max_length, pad_to_multiple_of

    def __call__(self, examples: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        out: dict[str, torch.Tensor] = {}
        m = self.pad_to_multiple_of
        for prefix, key in (("", "completion_ids"), ("KL_", "KL_completion_ids")):
            if key not in examples[0]:
                continue
            ids = [_data.truncate(list(e["prompt_ids"]) + list(e[key]), self.max_length) for e in examples]
            masks = [_data.truncate([0] * len(e["prompt_ids"]) + [1] * len(e[key]), self.max_length) for e in examples]
            out[f"{prefix}input_ids"] = _data.pad_lists(ids, self.pad_token_id, pad_to_multiple_of=m)
            out[f"{prefix}attention_mask"] = _data.pad_lists([[1] * len(i) for i in ids], 0, pad_to_multiple_of=m)
            out[f"{prefix}completion_mask"] = _data.pad_lists(masks, 0, pad_to_multiple_of=m)
        for key in ("ref_logps", "ref_KL_logps"):
            if key in examples[0]:
                out[key] = torch.tensor([e[key] for e in examples])
        out["label"] = torch.tensor([bool(e["label"]) for e in examples])
        return out


class _UnpairedTrainer(_BaseTrainer):
    """Shared machinery of KTO and BCO: data, reference model, sequence log-probs."""

    loss_is_scaled_for_ga = False
    _config_cls: type = BaseConfig

    def __init__(self, model: Any, ref_model: Any, args: Any, data_collator: Callable | None, train_dataset: Any,
                 eval_dataset: Any, processing_class: Any, compute_metrics: Callable | None, callbacks: list | None,
                 optimizers: tuple, peft_config: Any, needs_kl: bool) -> None:
        if train_dataset is None:
            raise ValueError("`train_dataset` is required")
        if ref_model is not None and ref_model is model:
            raise ValueError("`model` and `ref_model` cannot be the same object; omit `ref_model` to use a copy.")
        from transformers import set_seed

        set_seed(args.seed)
        model = self._prepare_model(model, args, peft_config)
        processing_class = self._prepare_processing_class(processing_class, model, args)
        self._tokenizer = getattr(processing_class, "tokenizer", processing_class)
        self.calculate_KL = needs_kl
        if ref_model is not None:
            ref_model = _model.load_causal_lm(ref_model, args)
        elif not _model.is_peft_model(model):
            ref_model = _model.create_reference_model(_model.causal_lm(model))
        if ref_model is not None:
            _model.add_engine_head(_model.causal_lm(ref_model))
            if args.disable_dropout:
                _model.disable_dropout(ref_model)
        if data_collator is None:
            data_collator = DataCollatorForUnpairedPreference(
                self._tokenizer.pad_token_id, args.max_length, args.pad_to_multiple_of
            )
        kl_batch = args.per_device_train_batch_size if needs_kl else None
        name = type(self).__name__
        train_dataset = prepare_unpaired_dataset(train_dataset, self._tokenizer, args, name, kl_batch)
        if eval_dataset is not None:
            eval_dataset = prepare_unpaired_dataset(eval_dataset, self._tokenizer, args, name,
                                                    args.per_device_eval_batch_size if needs_kl else None)
        super().__init__(
            model=model, args=args, data_collator=data_collator, train_dataset=train_dataset,
            eval_dataset=eval_dataset, processing_class=processing_class, compute_metrics=compute_metrics,
            callbacks=callbacks, optimizers=optimizers,
        )
        self.ref_model = None
        if ref_model is not None:
            ref_model.requires_grad_(False)
            self.ref_model = _model.prepare_frozen_model(self.accelerator, ref_model)
        self._total_train_tokens = 0
        if getattr(args, "precompute_ref_log_probs", False):
            self.train_dataset = self._precompute_ref_logps(self.train_dataset)
            self.ref_model = None

    def _get_train_sampler(self, train_dataset: Any = None) -> Any:
        sequential = getattr(self.args, "train_sampling_strategy", "random") == "sequential"
        if self.calculate_KL or sequential:  # the KL completions were rotated batch by batch: keep the batches
            dataset = self.train_dataset if train_dataset is None else train_dataset
            return SequentialSampler(dataset)
        return super()._get_train_sampler(train_dataset)

    def _set_signature_columns_if_needed(self) -> None:
        if self._signature_columns is None:
            self._signature_columns = ["prompt_ids", "completion_ids", "KL_completion_ids", "label", "ref_logps",
                                       "ref_KL_logps", "prompt"]

    def _sequence_logps(self, model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                        completion_mask: torch.Tensor, outputs: tuple[str, ...] = ("logp",)) -> dict[str, torch.Tensor]:
        labels = input_ids.masked_fill(completion_mask == 0, -100)
        stats = _model.forward_token_stats(model, input_ids, attention_mask, labels, outputs=outputs)
        stats["seq"] = stats["logp"].sum(-1)
        return stats

    def _reference_logps(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor | None]:
        if "ref_logps" in batch:
            return batch["ref_logps"], batch.get("ref_KL_logps")
        with torch.no_grad(), _model.no_gradient_checkpointing(self.model, self.args), \
                _model.reference_context(self.model, self.ref_model) as ref:
            ref_logps = self._sequence_logps(ref, batch["input_ids"], batch["attention_mask"],
                                             batch["completion_mask"])["seq"]
            ref_kl = None
            if self.calculate_KL:
                ref_kl = self._sequence_logps(ref, batch["KL_input_ids"], batch["KL_attention_mask"],
                                              batch["KL_completion_mask"])["seq"]
        return ref_logps, ref_kl

    def _precompute_ref_logps(self, dataset: Any) -> Any:
        from torch.utils.data import DataLoader

        keep = ("prompt_ids", "completion_ids", "KL_completion_ids", "label")
        loader = DataLoader(dataset.remove_columns([c for c in dataset.column_names if c not in keep]),
                            batch_size=self.args.precompute_ref_batch_size or self.args.per_device_train_batch_size,
                            collate_fn=self.data_collator, shuffle=False)
        ref, ref_kl = [], []
        for batch in loader:
            batch = self._prepare_inputs(batch)
            r, k = self._reference_logps(batch)
            ref += r.float().cpu().tolist()
            if k is not None:
                ref_kl += k.float().cpu().tolist()
        dataset = dataset.add_column("ref_logps", ref)
        return dataset.add_column("ref_KL_logps", ref_kl) if ref_kl else dataset

    def _token_metrics(self, stats: dict[str, torch.Tensor], batch: dict[str, torch.Tensor]) -> None:
        mode = self._mode
        mask = batch["completion_mask"][:, 1:].float()
        self._metrics[mode]["entropy"].append(self._masked_mean(stats["entropy"], mask))
        labels = batch["label"].bool()
        for side, sel in (("chosen", labels), ("rejected", ~labels)):
            m = mask[sel]
            if self.accelerator.reduce(m.sum().detach(), reduction="sum") > 0:
                self._metrics[mode][f"logits/{side}"].append(self._masked_mean(stats["mean_logits"][sel], m))
        if mode == "train":
            self._total_train_tokens += self.accelerator.gather_for_metrics(batch["attention_mask"].sum()).sum().item()
        self._metrics[mode]["num_tokens"] = [self._total_train_tokens]

    def prediction_step(self, model: Any, inputs: dict[str, Any], prediction_loss_only: bool,
                        ignore_keys: list[str] | None = None) -> tuple:
        inputs = self._prepare_inputs(inputs)
        with torch.no_grad(), self.compute_loss_context_manager():
            loss = self.compute_loss(model, inputs)
        return loss.detach(), None, None


class KTOTrainer(_UnpairedTrainer):
    """KTO on the chunked engine. Same constructor as TRL 1.16's `KTOTrainer`."""

    _name = "KTO"
    _tag_names = ["kto"]

    def __init__(
        self,
        model: Any,
        ref_model: Any = None,
        args: KTOConfig | None = None,
        data_collator: Callable | None = None,
        train_dataset: Any = None,
        eval_dataset: Any = None,
        processing_class: Any = None,
        compute_metrics: Callable | None = None,
        callbacks: list | None = None,
        optimizers: tuple = (None, None),
        quantization_config: Any = None,
        peft_config: Any = None,
    ) -> None:
        args = _coerce_args(args, KTOConfig, model, "KTO")
        if quantization_config is not None:
            args.model_init_kwargs = {**(args.model_init_kwargs or {}), "quantization_config": quantization_config}
        super().__init__(model, ref_model, args, data_collator, train_dataset, eval_dataset, processing_class,
                         compute_metrics, callbacks, optimizers, peft_config,
                         needs_kl=args.loss_type != "apo_zero_unpaired")

    def compute_loss(self, model: Any, inputs: dict[str, torch.Tensor], return_outputs: bool = False,
                     num_items_in_batch: Any = None) -> Any:
        args, mode = self.args, self._mode
        kl_logps = None
        if self.calculate_KL:
            with torch.no_grad():
                kl_logps = self._sequence_logps(model, inputs["KL_input_ids"], inputs["KL_attention_mask"],
                                                inputs["KL_completion_mask"])["seq"]
        stats = self._sequence_logps(model, inputs["input_ids"], inputs["attention_mask"], inputs["completion_mask"],
                                     outputs=("logp", "entropy", "mean_logits"))
        ref_logps, ref_kl_logps = self._reference_logps(inputs)
        kl = None
        if self.calculate_KL:
            kl = (kl_logps - ref_kl_logps).mean().detach()
            kl = self.accelerator.gather_for_metrics(kl).mean().clamp(min=0)
        loss, metrics = kto_loss(
            stats["seq"], ref_logps, inputs["label"], beta=args.beta, loss_type=args.loss_type,
            desirable_weight=args.desirable_weight, undesirable_weight=args.undesirable_weight, kl=kl,
        )
        self._metrics[mode]["kl"].append(float(metrics.pop("kl")) if kl is not None else 0.0)
        self._token_metrics(stats, inputs)
        for name, value in metrics.items():
            if name != "rewards/margins":
                self._metrics[mode][name].append(self._gathered_mean(value))
        if "rewards/chosen" in metrics and "rewards/rejected" in metrics:
            self._metrics[mode]["rewards/margins"].append(
                self._metrics[mode]["rewards/chosen"][-1] - self._metrics[mode]["rewards/rejected"][-1])
        return (loss, metrics) if return_outputs else loss
