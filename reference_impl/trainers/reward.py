"""Reward modelling: `RewardTrainer` and `RewardConfig`, drop-in for TRL 1.16's.

A sequence-classification model with one label scores `prompt + chosen` and `prompt + rejected` (standard or
conversational; the prompt may be implicit). The loss is `reference_impl.losses.reward.reward_loss`: Bradley-Terry
`-log sigmoid(r_chosen - r_rejected [- margin])`, plus `center_rewards_coefficient * mean((r_c + r_r)^2)` when set.
The scalar head is tiny, so no chunking is involved. Logged metrics (TRL's names): `min_reward`, `mean_reward`,
`max_reward`, `accuracy`, `margin`, `num_tokens`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from reference_impl.losses.reward import reward_loss

from . import _data
from ._base import _BaseTrainer, _coerce_args
from ._config import BaseConfig, option, unsupported


@dataclass
class RewardConfig(BaseConfig):
    """TRL 1.16 `RewardConfig` fields; chat-template cloning and activation offloading are not implemented."""

    learning_rate: float = option(1e-4, "Initial AdamW learning rate.")
    chat_template_path: str | None = unsupported(None, "chat template cloning")
    disable_dropout: bool = option(True, "Disable dropout in the model.")
    dataset_num_proc: int | None = option(None, "Processes for dataset preparation.")
    eos_token: str | None = option(None, "EOS token to use instead of the tokenizer's.")
    max_length: int | None = option(1024, "Drop pairs longer than this.")
    pad_to_multiple_of: int | str | None = option("auto", "Pad batches to a multiple of this ('auto': none).")
    center_rewards_coefficient: float | None = option(None, "Weight of the reward-centering term.")
    activation_offloading: bool = unsupported(False, "activation offloading")
    pad_token: str | None = option(None, "Padding token (default: the tokenizer's, else EOS).")


class DataCollatorForPreference:
    """`chosen_ids`/`rejected_ids` -> right-padded `[chosen; rejected]` batch (+ `margin`)."""

    def __init__(self, pad_token_id: int, pad_to_multiple_of: int | None = None) -> None:
        self.pad_token_id, self.pad_to_multiple_of = pad_token_id, pad_to_multiple_of

    def __call__(self, examples: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        ids = [e["chosen_ids"] for e in examples] + [e["rejected_ids"] for e in examples]
        m = self.pad_to_multiple_of
        out = {
            "input_ids": _data.pad_lists(ids, self.pad_token_id, pad_to_multiple_of=m),
            "attention_mask": _data.pad_lists([[1] * len(i) for i in ids], 0, pad_to_multiple_of=m),
        }
        if "margin" in examples[0]:
            out["margin"] = torch.tensor([float(e["margin"]) for e in examples])
        return out


class RewardTrainer(_BaseTrainer):
    """Bradley-Terry reward modelling. Same constructor as TRL 1.16's `RewardTrainer`."""

    _name = "Reward"
    _tag_names = ["reward-trainer"]
    loss_is_scaled_for_ga = False

    def __init__(
        self,
        model: Any,
        args: RewardConfig | None = None,
        data_collator: Callable | None = None,
        train_dataset: Any = None,
        eval_dataset: Any = None,
        processing_class: Any = None,
        compute_metrics: Callable | None = None,
        callbacks: list | None = None,
        optimizers: tuple = (None, None),
        optimizer_cls_and_kwargs: tuple | None = None,
        preprocess_logits_for_metrics: Callable | None = None,
        quantization_config: Any = None,
        peft_config: Any = None,
    ) -> None:
        args = _coerce_args(args, RewardConfig, model, "Reward")
        if train_dataset is None:
            raise ValueError("`train_dataset` is required")
        if quantization_config is not None:
            args.model_init_kwargs = {**(args.model_init_kwargs or {}), "quantization_config": quantization_config}
        if not isinstance(model, str) and getattr(model.config, "num_labels", None) != 1:
            raise ValueError(f"Reward models need `num_labels=1`; the model has num_labels={model.config.num_labels}.")
        from transformers import set_seed

        set_seed(args.seed)
        model = self._prepare_model(model, args, peft_config, kind="sequence-classification")
        processing_class = self._prepare_processing_class(processing_class, model, args)
        tokenizer = getattr(processing_class, "tokenizer", processing_class)
        if args.eos_token is not None:
            tokenizer.eos_token = args.eos_token
        config = model.config
        if getattr(config, "pad_token_id", None) is None:
            config.pad_token_id = tokenizer.pad_token_id
        self._tokenizer = tokenizer
        if data_collator is None:
            data_collator = DataCollatorForPreference(tokenizer.pad_token_id, args.pad_to_multiple_of)
        train_dataset = self._prepare_dataset(train_dataset, args)
        if eval_dataset is not None:
            eval_dataset = ({k: self._prepare_dataset(v, args) for k, v in eval_dataset.items()}
                            if isinstance(eval_dataset, dict) else self._prepare_dataset(eval_dataset, args))
        super().__init__(
            model=model, args=args, data_collator=data_collator, train_dataset=train_dataset,
            eval_dataset=eval_dataset, processing_class=processing_class, compute_metrics=compute_metrics,
            callbacks=callbacks, optimizers=optimizers, optimizer_cls_and_kwargs=optimizer_cls_and_kwargs,
            preprocess_logits_for_metrics=preprocess_logits_for_metrics,
        )
        self._total_train_tokens = 0

    def _prepare_dataset(self, dataset: Any, args: RewardConfig) -> Any:
        columns = _data.column_names(dataset)
        if "chosen_input_ids" in columns and "rejected_input_ids" in columns:
            dataset = dataset.rename_columns({"chosen_input_ids": "chosen_ids", "rejected_input_ids": "rejected_ids"})
            columns = _data.column_names(dataset)
        map_kwargs: dict[str, Any] = {"num_proc": args.dataset_num_proc} if hasattr(dataset, "num_rows") else {}
        if not ("chosen_ids" in columns and "rejected_ids" in columns):
            _data.require_columns(columns, [("prompt", "chosen", "rejected"), ("chosen", "rejected")], "RewardTrainer")
            tokenizer = self._tokenizer

            def tokenize_fn(example: dict[str, Any]) -> dict[str, Any]:
                prompt = example.get("prompt")
                out = {}
                for side in ("chosen", "rejected"):
                    text = example[side] if prompt is None else prompt + example[side]
                    if _data.is_conversational(example):
                        out[f"{side}_ids"] = _data.tokenize(tokenizer, text, **_data.template_kwargs(example))
                    else:
                        out[f"{side}_ids"] = _data.tokenize(tokenizer, _data.add_eos(text, tokenizer.eos_token))
                return out

            dataset = dataset.map(tokenize_fn, **map_kwargs)
        if args.max_length is not None:
            n = args.max_length
            dataset = dataset.filter(lambda ex: len(ex["chosen_ids"]) <= n and len(ex["rejected_ids"]) <= n,
                                     **map_kwargs)
        return dataset

    def _set_signature_columns_if_needed(self) -> None:
        if self._signature_columns is None:
            self._signature_columns = ["chosen_ids", "rejected_ids", "margin"]

    def compute_loss(self, model: Any, inputs: dict[str, torch.Tensor], return_outputs: bool = False,
                     num_items_in_batch: Any = None) -> Any:
        mode = self._mode
        outputs = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"], use_cache=False)
        chosen, rejected = torch.chunk(outputs.logits.squeeze(-1), chunks=2)
        loss, _ = reward_loss(chosen, rejected, margin=inputs.get("margin"),
                              center_rewards_coefficient=self.args.center_rewards_coefficient)
        if mode == "train":
            self._total_train_tokens += self.accelerator.gather_for_metrics(inputs["attention_mask"].sum()).sum().item()
        self._metrics[mode]["num_tokens"] = [self._total_train_tokens]
        with torch.no_grad():
            all_rewards = self.accelerator.gather(outputs.logits)
            self._metrics[mode]["min_reward"].append(all_rewards.min().item())
            self._metrics[mode]["mean_reward"].append(all_rewards.mean().item())
            self._metrics[mode]["max_reward"].append(all_rewards.max().item())
            self._metrics[mode]["accuracy"].append(self._gathered_mean((chosen > rejected).float().mean()))
            self._metrics[mode]["margin"].append(self._gathered_mean((chosen - rejected).mean()))
        return (loss, outputs) if return_outputs else loss

    def prediction_step(self, model: Any, inputs: dict[str, Any], prediction_loss_only: bool,
                        ignore_keys: list[str] | None = None) -> tuple:
        """Evaluation: the pairwise loss, and `[B, 2]` (chosen, rejected) scores as the predictions."""
        inputs = self._prepare_inputs(inputs)
        with torch.no_grad(), self.compute_loss_context_manager():
            loss, outputs = self.compute_loss(model, inputs, return_outputs=True)
        if prediction_loss_only:
            return loss.detach(), None, None
        chosen, rejected = outputs.logits.squeeze(-1).chunk(2)
        return loss.detach(), torch.stack([chosen, rejected], dim=1), None
