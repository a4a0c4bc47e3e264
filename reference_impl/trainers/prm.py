"""Process reward models: `PRMTrainer` and `PRMConfig`, a home for TRL's PRM trainer (`trl.experimental.prm`,
removed in TRL 1.14 with no successor; constructor and config follow TRL 1.13's).

A process reward model scores every step of a solution instead of the whole sequence: process supervision was
proposed by Uesato et al. 2022 ("Solving math word problems with process- and outcome-based feedback",
arXiv:2211.14275), scaled up with human step labels by Lightman et al. 2023 ("Let's Verify Step by Step",
arXiv:2305.20050, PRM800K) and with automatic ones by Wang et al. 2024 (Math-Shepherd, arXiv:2312.08935). All three
train a classifier of step correctness.

Data: `prompt` (text), `completions` (the steps, a list of texts) and `labels` (one bool per step). Each row becomes
one sequence (`PRMTrainer.tokenize_row`, TRL's rule):

    input_ids = [bos] + prompt + step_1 + sep + step_2 + sep + ... + step_K + sep
    labels    = -100 everywhere except the last token of each step's `sep`, which carries that step's label

(`train_on_last_step_only`: only step K's label is kept, on training data only; `max_completion_length` truncates the
steps, then `max_length` the whole row.) A token-classification model (`AutoModelForTokenClassification`, 2 labels:
0 = wrong step, 1 = correct step) is trained with cross-entropy on those positions only,

    L = -(1 / N) * sum over labelled positions t of log softmax(z_t)[y_t],    z_t = the model's 2 logits at t,

with N the number of labelled positions in the optimizer step (transformers' `num_items_in_batch`;
`reference_impl.losses.reward.process_reward_loss`). TRL 1.13 lets
the model compute the loss; transformers' generic token-classification heads (Llama, Qwen2, Mistral, ... on 5.24)
drop `num_items_in_batch` and return the micro-batch mean while the Trainer, seeing a model that accepts loss
kwargs, skips its division by the accumulation steps: without gradient accumulation both give the same number, with
it TRL's loss is the sum of the micro-batch means (about `gradient_accumulation_steps` times this one). The score of step k is then
`softmax(z_t)[1]` at its separator; combining the step scores (Lightman's product, Math-Shepherd's minimum) is the
caller's choice. The logits are `[batch, seq, 2]`, so no chunking is involved. Logged metrics are TRL's: the
Trainer's `loss`, and on evaluation `accuracy`, the argmax accuracy over labelled positions (`compute_accuracy`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np
import torch

from reference_impl.losses.reward import process_reward_loss

from . import _data
from ._base import TRANSFORMERS_VERSION, _BaseTrainer, _coerce_args
from ._config import BaseConfig, option


@dataclass
class PRMConfig(BaseConfig):
    """TRL 1.13 `PRMConfig` fields (`trl.experimental.prm`)."""

    learning_rate: float = option(1e-5, "Initial AdamW learning rate.")
    max_length: int | None = option(1024, "Truncate prompt + completion to this many tokens.")
    max_completion_length: int | None = option(None, "Truncate the completion (the joined steps) to this many tokens.")
    disable_dropout: bool = option(True, "Disable dropout in the model.")
    step_separator: str = option("\n", "Separator appended to every step; the step's label sits on its last token.")
    train_on_last_step_only: bool = option(False, "Train on the last step's label only (evaluation keeps all).")
    dataset_num_proc: int | None = option(None, "Processes for dataset preparation.")


def compute_accuracy(eval_pred: Any) -> dict[str, float]:
    """TRL's default PRM metric: argmax accuracy over the labelled positions of `[batch, seq, num_labels]` logits."""
    predictions, labels = eval_pred
    predictions, labels = np.argmax(predictions, axis=2).reshape(-1), np.asarray(labels).reshape(-1)
    keep = labels != -100
    return {"accuracy": float(np.mean(predictions[keep] == labels[keep]))}


class PRMTrainer(_BaseTrainer):
    """Process reward modelling on a token-classification model. Constructor as TRL 1.13's
    `trl.experimental.prm.PRMTrainer`."""

    _name = "PRM"
    _tag_names = ["prm"]
    loss_is_scaled_for_ga = True  # divided by N of the whole step, or by the accumulation steps in `compute_loss`

    def __init__(
        self,
        model: Any = None,
        args: PRMConfig | None = None,
        data_collator: Callable | None = None,
        train_dataset: Any = None,
        eval_dataset: Any = None,
        processing_class: Any = None,
        model_init: Callable | None = None,
        compute_metrics: Callable | None = None,
        callbacks: list | None = None,
        optimizers: tuple = (None, None),
        preprocess_logits_for_metrics: Callable | None = None,
        peft_config: Any = None,
    ) -> None:
        if train_dataset is None:
            raise ValueError("`train_dataset` is required")
        if model_init is not None:
            raise ValueError("`model_init` is not supported by reference_impl's PRMTrainer: pass the model.")
        args = _coerce_args(args, PRMConfig, model, "PRM")
        model = self._prepare_model(model, args, peft_config, kind="token-classification")
        processing_class = self._prepare_processing_class(processing_class, model, args)
        tokenizer = getattr(processing_class, "tokenizer", processing_class)
        self._tokenizer = tokenizer
        if data_collator is None:
            from transformers import DataCollatorForTokenClassification

            data_collator = DataCollatorForTokenClassification(tokenizer)
        train_dataset = self._prepare_dataset(train_dataset, args, is_eval=False)
        if eval_dataset is not None:
            eval_dataset = ({k: self._prepare_dataset(v, args, is_eval=True) for k, v in eval_dataset.items()}
                            if isinstance(eval_dataset, dict) else self._prepare_dataset(eval_dataset, args, is_eval=True))
        if args.gradient_checkpointing and TRANSFORMERS_VERSION.major < 5:  # as TRL: non-reentrant checkpointing
            args.gradient_checkpointing_kwargs = args.gradient_checkpointing_kwargs or {}
            args.gradient_checkpointing_kwargs.setdefault("use_reentrant", False)
        super().__init__(
            model=model, args=args, data_collator=data_collator, train_dataset=train_dataset,
            eval_dataset=eval_dataset, processing_class=processing_class,
            compute_metrics=compute_accuracy if compute_metrics is None else compute_metrics,
            callbacks=callbacks, optimizers=optimizers, preprocess_logits_for_metrics=preprocess_logits_for_metrics,
        )

    # ------------------------------------------------------------------------------------------------------ data
    def _prepare_dataset(self, dataset: Any, args: PRMConfig, is_eval: bool) -> Any:
        """Tokenize `prompt`/`completions`/`labels` rows with `tokenize_row`; a dataset with `input_ids` is kept."""
        columns = _data.column_names(dataset)
        if "input_ids" in columns:
            return dataset
        _data.require_columns(columns, [("prompt", "completions", "labels")], "PRMTrainer")
        from datasets import features

        fn_kwargs = dict(tokenizer=self._tokenizer, step_separator=args.step_separator, max_length=args.max_length,
                         max_completion_length=args.max_completion_length,
                         train_on_last_step_only=args.train_on_last_step_only, is_eval=is_eval)
        map_kwargs: dict[str, Any] = {"num_proc": args.dataset_num_proc} if hasattr(dataset, "num_rows") else {}
        # explicit features: otherwise `map` would cast the 0/1 labels to bool
        map_kwargs["features"] = features.Features({"labels": features.Sequence(features.Value("int64")),
                                                    "input_ids": features.Sequence(features.Value("int64"))})
        return dataset.map(self.tokenize_row, fn_kwargs=fn_kwargs, remove_columns=columns, **map_kwargs)

    @staticmethod
    def tokenize_row(
        features: dict[str, Any],
        tokenizer: Any,
        step_separator: str,
        max_length: int | None,
        max_completion_length: int | None,
        train_on_last_step_only: bool,
        is_eval: bool,
    ) -> dict[str, list[int]]:
        """One row -> `{"input_ids", "labels"}` (TRL 1.13's signature and rule, see the module docstring).

        The prompt and each step are tokenized on their own without special tokens, the tokenized separator is
        appended to every step, the step's label goes on the separator's last token; `bos` (when the tokenizer has
        one) starts the prompt; the completion is cut to `max_completion_length`, then the row to `max_length`.
        """
        prompt_ids = tokenizer(features["prompt"], add_special_tokens=False)["input_ids"]
        separator_ids = tokenizer.encode(step_separator, add_special_tokens=False)
        steps = [tokenizer(step, add_special_tokens=False)["input_ids"] + separator_ids
                 for step in features["completions"]]
        if train_on_last_step_only and not is_eval:
            step_labels = [-100] * (len(features["labels"]) - 1) + [int(features["labels"][-1])]
        else:
            step_labels = [int(label) for label in features["labels"]]
        completion_ids = list(chain(*steps))
        labels = list(chain(*([-100] * (len(s) - 1) + [y] for s, y in zip(steps, step_labels, strict=True))))
        if tokenizer.bos_token_id is not None:
            prompt_ids = [tokenizer.bos_token_id] + prompt_ids
        if max_completion_length is not None:
            completion_ids, labels = completion_ids[:max_completion_length], labels[:max_completion_length]
        input_ids, labels = prompt_ids + completion_ids, [-100] * len(prompt_ids) + labels
        if max_length is not None:
            input_ids, labels = input_ids[:max_length], labels[:max_length]
        return {"input_ids": input_ids, "labels": labels}

    # ------------------------------------------------------------------------------------------------------ loss
    def compute_loss(self, model: Any, inputs: dict[str, torch.Tensor], return_outputs: bool = False,
                     num_items_in_batch: Any = None) -> Any:
        outputs = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"])
        loss = process_reward_loss(outputs.logits, inputs["labels"], num_items_in_batch=num_items_in_batch)
        if num_items_in_batch is None and self._mode == "train":
            loss = loss / self._accumulation_steps()  # a batch mean (no N counted): scaled for accumulation here
        elif num_items_in_batch is not None and self.args.average_tokens_across_devices:
            loss = loss * self.accelerator.num_processes  # N counts every process; DDP averages the gradients
        return (loss, outputs) if return_outputs else loss
