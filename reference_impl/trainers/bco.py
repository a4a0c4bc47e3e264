"""Binary Classifier Optimization: `BCOTrainer` and `BCOConfig`, a home for TRL's BCO (`trl.experimental.bco`,
removed in TRL 1.14; constructor and config follow TRL 1.13's).

Unpaired data (`prompt`/`completion`/`label`, or paired data unpaired). The implicit reward
`r = beta * log(pi / pi_ref)` of desirable completions is pushed above a running mean `delta` of all rewards and
that of undesirable ones below it (`reference_impl.losses.unpaired.bco_loss` with its `RunningMoments`).
Underlying distribution matching (UDM): with `embedding_func`, a logistic-regression classifier (scikit-learn) of
prompt embeddings estimates `p(desirable | prompt)` and undesirable examples are weighted by the clamped density
ratio (`udm_density_ratio_weights`). Logged metrics (TRL's names): `delta`, `rewards/{chosen,rejected,margins}`,
`logps/{chosen,rejected}`, `logits/{chosen,rejected}`, `entropy`, `num_tokens`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from reference_impl.losses.unpaired import RunningMoments, bco_loss, udm_density_ratio_weights

from ._base import _coerce_args
from ._config import BaseConfig, option, unsupported
from .kto import _UnpairedTrainer


@dataclass
class BCOConfig(BaseConfig):
    """TRL 1.13 `BCOConfig` fields (`trl.experimental.bco`)."""

    learning_rate: float = option(5e-7, "Initial AdamW learning rate.")
    max_length: int | None = option(1024, "Truncate prompt+completion to this length.")
    max_completion_length: int | None = unsupported(None, "encoder-decoder models")
    beta: float = option(0.1, "Implicit-reward temperature.")
    disable_dropout: bool = option(True, "Disable dropout in the policy and reference.")
    generate_during_eval: bool = unsupported(False, "sample logging")
    is_encoder_decoder: bool | None = unsupported(None, "encoder-decoder models")
    precompute_ref_log_probs: bool = option(False, "Score the dataset with the reference once before training.")
    precompute_ref_batch_size: int | None = option(None, "Batch size of the precomputation.")
    dataset_num_proc: int | None = option(None, "Processes for dataset preparation.")
    prompt_sample_size: int = option(1024, "Prompts fed to the UDM density-ratio classifier.")
    min_density_ratio: float = option(0.5, "Lower clamp of the UDM density ratio.")
    max_density_ratio: float = option(10.0, "Upper clamp of the UDM density ratio.")
    pad_to_multiple_of: int | str | None = option(None, "Pad batches to a multiple of this.")


class BCOTrainer(_UnpairedTrainer):
    """BCO on the chunked engine. Constructor as TRL 1.13's `trl.experimental.bco.BCOTrainer`."""

    _name = "BCO"
    _tag_names = ["bco"]

    def __init__(
        self,
        model: Any = None,
        ref_model: Any = None,
        args: BCOConfig | None = None,
        train_dataset: Any = None,
        eval_dataset: Any = None,
        processing_class: Any = None,
        data_collator: Callable | None = None,
        model_init: Callable | None = None,
        callbacks: list | None = None,
        optimizers: tuple = (None, None),
        preprocess_logits_for_metrics: Callable | None = None,
        peft_config: Any = None,
        compute_metrics: Callable | None = None,
        model_adapter_name: str | None = None,
        ref_adapter_name: str | None = None,
        embedding_func: Callable | None = None,
        embedding_tokenizer: Any = None,
    ) -> None:
        if model_init is not None or model_adapter_name or ref_adapter_name or preprocess_logits_for_metrics:
            raise ValueError("`model_init`, adapter names and `preprocess_logits_for_metrics` are not supported by "
                             "reference_impl's BCOTrainer.")
        args = _coerce_args(args, BCOConfig, model, "BCO")
        self.running = RunningMoments()
        self.embedding_func = embedding_func
        self.embedding_tokenizer = embedding_tokenizer
        self.clf = None
        super().__init__(model, ref_model, args, data_collator, train_dataset, eval_dataset, processing_class,
                         compute_metrics, callbacks, optimizers, peft_config, needs_kl=False)
        self.running.reduce = self._global_moments if self.accelerator.num_processes > 1 else None
        if embedding_func is not None:
            self._fit_udm_classifier()

    def _global_moments(self, xs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, int]:
        """(mean, population var, count) of `xs` across processes."""
        sums = torch.stack([xs.sum(), (xs**2).sum(), torch.tensor(float(xs.numel()), device=xs.device)])
        sums = self.accelerator.reduce(sums, reduction="sum")
        mean = sums[0] / sums[2]
        return mean, sums[1] / sums[2] - mean**2, int(sums[2].item())

    # ------------------------------------------------------------------------------------------------------ UDM
    def _prompt_embeddings(self, prompt_ids: list[list[int]]) -> torch.Tensor:
        tok = self.embedding_tokenizer or self._tokenizer
        texts = self._tokenizer.batch_decode(prompt_ids, skip_special_tokens=True)
        enc = tok(texts, return_tensors="pt", padding=True).to(self.accelerator.device)
        with torch.no_grad():
            return self.embedding_func(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]).float()

    def _fit_udm_classifier(self) -> None:
        try:
            from sklearn.linear_model import LogisticRegression
        except ImportError as e:
            raise ImportError("BCO's underlying distribution matching (`embedding_func`) needs scikit-learn: "
                              "pip install scikit-learn") from e
        n = min(self.args.prompt_sample_size, len(self.train_dataset))
        sample = self.train_dataset.shuffle(seed=self.args.seed).select(range(n))
        labels = sample["label"]
        chosen = [p for p, lab in zip(sample["prompt_ids"], labels) if lab]
        rejected = [p for p, lab in zip(sample["prompt_ids"], labels) if not lab]
        emb = torch.cat([self._prompt_embeddings(chosen), self._prompt_embeddings(rejected)]).cpu().numpy()
        y = [1] * len(chosen) + [0] * len(rejected)
        self.clf = LogisticRegression(class_weight="balanced").fit(emb, y)

    def _rejected_weights(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor | None:
        if self.clf is None:
            return None
        rejected = ~inputs["label"].bool()
        if not rejected.any():
            return None
        ids = [row[m.bool() & (c == 0)].tolist() for row, m, c, r in zip(
            inputs["input_ids"], inputs["attention_mask"], inputs["completion_mask"], rejected) if r]
        prob = torch.tensor(self.clf.predict_proba(self._prompt_embeddings(ids).cpu().numpy())[:, 1],
                            device=inputs["input_ids"].device, dtype=torch.float32)
        return udm_density_ratio_weights(prob, min_density_ratio=self.args.min_density_ratio,
                                         max_density_ratio=self.args.max_density_ratio)

    # ------------------------------------------------------------------------------------------------------ loss
    def compute_loss(self, model: Any, inputs: dict[str, torch.Tensor], return_outputs: bool = False,
                     num_items_in_batch: Any = None) -> Any:
        mode = self._mode
        stats = self._sequence_logps(model, inputs["input_ids"], inputs["attention_mask"], inputs["completion_mask"],
                                     outputs=("logp", "entropy", "mean_logits"))
        ref_logps, _ = self._reference_logps(inputs)
        loss, metrics = bco_loss(stats["seq"], ref_logps, inputs["label"], beta=self.args.beta, running=self.running,
                                 update_running=mode == "train", rejected_weights=self._rejected_weights(inputs))
        self._token_metrics(stats, inputs)
        for name, value in metrics.items():
            if name != "rewards/margins":
                self._metrics[mode][name].append(self._gathered_mean(value))
        if "rewards/chosen" in metrics and "rewards/rejected" in metrics:
            self._metrics[mode]["rewards/margins"].append(
                self._metrics[mode]["rewards/chosen"][-1] - self._metrics[mode]["rewards/rejected"][-1])
        return (loss, metrics) if return_outputs else loss
