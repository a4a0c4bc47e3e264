"""Direct Preference Optimization: `DPOTrainer` and `DPOConfig`, drop-in for TRL 1.16's.

Datasets: preference data, `prompt`/`chosen`/`rejected` (standard or conversational) or `chosen`/`rejected` with
the prompt implicit in both. Standard completions get the EOS appended; conversations go through the chat template.

Each batch is `[chosen rows; rejected rows]`, scored by the policy and the reference through the chunked engine
(the lm_head never runs in full); the loss is `reference_impl.losses.preference.dpo_loss`, every `loss_type` of
TRL 1.16 (also lists combined with `loss_weights`), f-divergences, LD-DPO (`ld_alpha`), WPO (`use_weighting`).

Reference: `ref_model` if given; else, for a PEFT policy, the same model with its adapters disabled; else a frozen
copy (`create_reference_model`) - TRL reloads the policy from its path instead, which fails for unsaved models.
`precompute_ref_log_probs` scores the whole dataset with the reference once, before training, then drops it.
Logged metrics (TRL's names): `rewards/{chosen,rejected,accuracies,margins}`, `logps/{chosen,rejected}`,
`logits/{chosen,rejected}`, `entropy`, `mean_token_accuracy`, `num_tokens`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from reference_impl.losses.preference import DPO_LOSS_TYPES, dpo_loss, sequence_logps

from . import _data, _model
from ._base import _BaseTrainer, _coerce_args
from ._config import BaseConfig, option, unsupported


@dataclass
class DPOConfig(BaseConfig):
    """TRL 1.16 `DPOConfig` fields; `sync_ref_model`, padding-free and activation offloading are not implemented."""

    learning_rate: float = option(1e-6, "Initial AdamW learning rate.")
    router_aux_loss_coef: float | None = unsupported(None, "MoE auxiliary loss")
    disable_dropout: bool = option(True, "Disable dropout in the policy and reference.")
    dataset_num_proc: int | None = option(None, "Processes for dataset preparation.")
    max_length: int | None = option(1024, "Truncate prompt+completion to this length.")
    truncation_mode: str = option("keep_start", "'keep_start' or 'keep_end'.")
    padding_free: bool = unsupported(False, "padding-free batches")
    pad_to_multiple_of: int | str | None = option("auto", "Pad batches to a multiple of this ('auto': none).")
    precompute_ref_log_probs: bool = option(False, "Score the dataset with the reference once before training.")
    precompute_ref_batch_size: int | None = option(None, "Batch size of the precomputation.")
    loss_type: list[str] | str = option(factory=lambda: ["sigmoid"], help=f"One or more of {DPO_LOSS_TYPES}.")
    loss_weights: list[float] | None = option(None, "Weight of each loss type.")
    ld_alpha: float | None = option(None, "LD-DPO weight of the tokens past the shorter completion.")
    f_divergence_type: str = option("reverse_kl", "reverse_kl, forward_kl, js_divergence or alpha_divergence.")
    f_alpha_divergence_coef: float = option(0.5, "alpha of the alpha-divergence.")
    label_smoothing: float = option(0.0, "Label smoothing (cDPO, robust, EXO, AOT).")
    beta: float = option(0.1, "KL-regularisation strength.")
    use_weighting: bool = option(False, "WPO weighting.")
    discopop_tau: float = option(0.05, "DiscoPOP temperature.")
    activation_offloading: bool = unsupported(False, "activation offloading")
    sync_ref_model: bool = unsupported(False, "TR-DPO reference syncing")
    ref_model_mixup_alpha: float = unsupported(0.6, "TR-DPO reference syncing")
    ref_model_sync_steps: int = unsupported(512, "TR-DPO reference syncing")
    pad_token: str | None = option(None, "Padding token (default: the tokenizer's, else EOS).")

    def __post_init__(self) -> None:
        if isinstance(self.loss_type, str):
            self.loss_type = [self.loss_type]
        super().__post_init__()
        for name in self.loss_type:
            if name not in DPO_LOSS_TYPES:
                raise ValueError(f"Unknown DPO loss_type {name!r}; expected one of {DPO_LOSS_TYPES}.")
        if self.loss_weights is not None and len(self.loss_weights) != len(self.loss_type):
            raise ValueError("`loss_weights` needs one weight per `loss_type`.")


class DataCollatorForPreference:
    """`prompt_ids`/`chosen_ids`/`rejected_ids` -> right-padded `[chosen; rejected]` batch with completion masks."""

    def __init__(self, pad_token_id: int, max_length: int | None = None, truncation_mode: str = "keep_start",
                 pad_to_multiple_of: int | None = None) -> None:
        self.pad_token_id, self.max_length = pad_token_id, max_length
        self.truncation_mode, self.pad_to_multiple_of = truncation_mode, pad_to_multiple_of

    def __call__(self, examples: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        ids, masks = [], []
        for side in ("chosen_ids", "rejected_ids"):
            for e in examples:
                seq = list(e["prompt_ids"]) + list(e[side])
                mask = [0] * len(e["prompt_ids"]) + [1] * len(e[side])
                ids.append(_data.truncate(seq, self.max_length, self.truncation_mode))
                masks.append(_data.truncate(mask, self.max_length, self.truncation_mode))
        m = self.pad_to_multiple_of
        out = {
            "input_ids": _data.pad_lists(ids, self.pad_token_id, pad_to_multiple_of=m),
            "attention_mask": _data.pad_lists([[1] * len(i) for i in ids], 0, pad_to_multiple_of=m),
            "completion_mask": _data.pad_lists(masks, 0, pad_to_multiple_of=m),
        }
        if "ref_chosen_logps" in examples[0]:
            out["ref_logps"] = torch.tensor(
                [e["ref_chosen_logps"] for e in examples] + [e["ref_rejected_logps"] for e in examples]
            )
        return out


def prepare_preference_dataset(dataset: Any, tokenizer: Any, args: Any, trainer: str = "DPOTrainer") -> Any:
    """Tokenise a paired preference dataset into `prompt_ids`, `chosen_ids`, `rejected_ids` (TRL's rules)."""
    columns = _data.column_names(dataset)
    _data.require_columns(columns, [("prompt", "chosen", "rejected"), ("chosen", "rejected")], trainer)
    map_kwargs: dict[str, Any] = {"num_proc": args.dataset_num_proc} if hasattr(dataset, "num_rows") else {}
    if "prompt" not in columns:
        dataset = dataset.map(_data.extract_prompt, **map_kwargs)

    def tokenize_fn(example: dict[str, Any]) -> dict[str, Any]:
        return _data.tokenize_prompt_completions(example, tokenizer, ("chosen", "rejected"))

    dataset = dataset.map(tokenize_fn, **map_kwargs)
    if args.max_length is not None and getattr(args, "truncation_mode", "keep_start") == "keep_start":
        dataset = dataset.filter(lambda ex: len(ex["prompt_ids"]) < args.max_length, **map_kwargs)
    return dataset


class DPOTrainer(_BaseTrainer):
    """DPO and its variants on the chunked engine. Same constructor as TRL 1.16's `DPOTrainer`."""

    _name = "DPO"
    _tag_names = ["dpo"]
    loss_is_scaled_for_ga = False

    def __init__(
        self,
        model: Any,
        ref_model: Any = None,
        args: DPOConfig | None = None,
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
        args = _coerce_args(args, DPOConfig, model, "DPO")
        if train_dataset is None:
            raise ValueError("`train_dataset` is required")
        if ref_model is not None and ref_model is model:
            raise ValueError("`model` and `ref_model` cannot be the same object; omit `ref_model` to use a copy.")
        if quantization_config is not None:
            args.model_init_kwargs = {**(args.model_init_kwargs or {}), "quantization_config": quantization_config}
        from transformers import set_seed

        set_seed(args.seed)
        model = self._prepare_model(model, args, peft_config)
        processing_class = self._prepare_processing_class(processing_class, model, args)
        self._tokenizer = getattr(processing_class, "tokenizer", processing_class)
        if ref_model is not None:
            ref_model = _model.load_causal_lm(ref_model, args)
        elif not _model.is_peft_model(model):
            ref_model = _model.create_reference_model(_model.causal_lm(model))
        if ref_model is not None:
            _model.add_engine_head(_model.causal_lm(ref_model))
            if args.disable_dropout:
                _model.disable_dropout(ref_model)
        if data_collator is None:
            data_collator = DataCollatorForPreference(
                self._tokenizer.pad_token_id, args.max_length, args.truncation_mode, args.pad_to_multiple_of
            )
        train_dataset = prepare_preference_dataset(train_dataset, self._tokenizer, args)
        if eval_dataset is not None:
            eval_dataset = (
                {k: prepare_preference_dataset(v, self._tokenizer, args) for k, v in eval_dataset.items()}
                if isinstance(eval_dataset, dict) else prepare_preference_dataset(eval_dataset, self._tokenizer, args)
            )
        super().__init__(
            model=model, args=args, data_collator=data_collator, train_dataset=train_dataset,
            eval_dataset=eval_dataset, processing_class=processing_class, compute_metrics=compute_metrics,
            callbacks=callbacks, optimizers=optimizers,
        )
        self.ref_model = ref_model
        if self.ref_model is not None:
            self.ref_model = self._prepare_reference(self.ref_model)
        self._total_train_tokens = 0
        if args.precompute_ref_log_probs:
            self.train_dataset = self._precompute_ref_logps(self.train_dataset)
            if self.eval_dataset is not None and not isinstance(self.eval_dataset, dict):
                self.eval_dataset = self._precompute_ref_logps(self.eval_dataset)
            self.ref_model = None  # no longer needed

    def _prepare_reference(self, ref_model: Any) -> Any:
        """Place the frozen reference like the policy (DeepSpeed/FSDP aware through accelerate)."""
        ref_model.requires_grad_(False)
        return _model.prepare_frozen_model(self.accelerator, ref_model)

    def _set_signature_columns_if_needed(self) -> None:
        if self._signature_columns is None:
            self._signature_columns = ["prompt_ids", "chosen_ids", "rejected_ids", "ref_chosen_logps",
                                       "ref_rejected_logps"]

    # ------------------------------------------------------------------------------------------------- reference
    def _sequence_ref_logps(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        """Per-token reference log-probs `[2B, T-1]` of the completion tokens."""
        labels = inputs["input_ids"].masked_fill(inputs["completion_mask"] == 0, -100)
        with torch.no_grad(), _model.no_gradient_checkpointing(self.model, self.args), \
                _model.reference_context(self.model, self.ref_model) as ref:
            stats = _model.forward_token_stats(ref, inputs["input_ids"], inputs["attention_mask"], labels)
        return stats["logp"]

    def _precompute_ref_logps(self, dataset: Any) -> Any:
        from torch.utils.data import DataLoader

        batch_size = self.args.precompute_ref_batch_size or self.args.per_device_train_batch_size
        loader = DataLoader(dataset.remove_columns([c for c in dataset.column_names if c not in
                                                    ("prompt_ids", "chosen_ids", "rejected_ids")]),
                            batch_size=batch_size, collate_fn=self.data_collator, shuffle=False)
        chosen, rejected = [], []
        for batch in loader:
            batch = self._prepare_inputs(batch)
            mask = batch["completion_mask"][:, 1:]
            seq = sequence_logps(self._sequence_ref_logps(batch), mask, ld_alpha=self.args.ld_alpha).float().cpu()
            c, r = seq.chunk(2)
            chosen += c.tolist()
            rejected += r.tolist()
        return dataset.add_column("ref_chosen_logps", chosen).add_column("ref_rejected_logps", rejected)

    # ------------------------------------------------------------------------------------------------------ loss
    def compute_loss(self, model: Any, inputs: dict[str, torch.Tensor], return_outputs: bool = False,
                     num_items_in_batch: Any = None) -> Any:
        args, mode = self.args, self._mode
        labels = inputs["input_ids"].masked_fill(inputs["completion_mask"] == 0, -100)
        wanted = ("logp", "entropy", "mean_logits", "is_top1") + (("log_sum_sq_probs",) if args.use_weighting else ())
        stats = _model.forward_token_stats(model, inputs["input_ids"], inputs["attention_mask"], labels,
                                           outputs=wanted)
        mask = inputs["completion_mask"][:, 1:]
        ref_logps = inputs["ref_logps"] if "ref_logps" in inputs else self._sequence_ref_logps(inputs)
        loss, metrics = dpo_loss(
            stats["logp"], mask, ref_logps,
            beta=args.beta, loss_type=args.loss_type, loss_weights=args.loss_weights,
            label_smoothing=args.label_smoothing, f_divergence_type=args.f_divergence_type,
            f_alpha_divergence_coef=args.f_alpha_divergence_coef, ld_alpha=args.ld_alpha,
            discopop_tau=args.discopop_tau, use_weighting=args.use_weighting,
            log_sum_sq_probs=stats.get("log_sum_sq_probs"), entropy=stats["entropy"],
            mean_logits=stats["mean_logits"], is_top1=stats["is_top1"],
        )
        for name, value in metrics.items():
            self._metrics[mode][name].append(self._gathered_mean(value))
        if mode == "train":
            self._total_train_tokens += self.accelerator.gather_for_metrics(inputs["attention_mask"].sum()).sum().item()
        self._metrics[mode]["num_tokens"] = [self._total_train_tokens]
        return (loss, metrics) if return_outputs else loss

    def prediction_step(self, model: Any, inputs: dict[str, Any], prediction_loss_only: bool,
                        ignore_keys: list[str] | None = None) -> tuple:
        inputs = self._prepare_inputs(inputs)
        with torch.no_grad(), self.compute_loss_context_manager():
            loss = self.compute_loss(model, inputs)
        return loss.detach(), None, None
