"""A*-PO (Optimal Advantage Regression): `A2POTrainer` and `A2POConfig`, drop-in for TRL 1.16's
`trl.experimental.a2po` (https://huggingface.co/papers/2505.20686).

Stage 1 (once, before training): `num_value_samples` completions per prompt are sampled from the frozen reference
policy and scored; the optimal value is `V*(x) = beta1 * log(mean_i exp(r_i / beta1))`, cached per prompt text.
Prompts whose samples all scored 0 are dropped (`filter_all_incorrect`).
Stage 2 (each step): one on-policy completion per prompt; the loss regresses the implicit reward
`beta2 * log(pi(y|x) / pi_ref(y|x))` onto the optimal advantage `r - V*(x)` (squared error, batch mean).
Both formulas live in `reference_impl.losses.policy` (`optimal_value`, `a2po_loss`).
Sequence log-probs come from the chunked engine (temperature 1, like TRL). Logged metrics (TRL's names): `reward`,
`v_star`, `implicit_reward`, `advantage`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from reference_impl.losses.policy import a2po_loss, optimal_value

from . import _data, _model
from ._base import _coerce_args
from ._config import BaseConfig, option
from ._online import RewardFunctions, _OnlineTrainer


@dataclass
class A2POConfig(BaseConfig):
    """TRL 1.16 `A2POConfig` fields."""

    remove_unused_columns: bool = option(False, "Keep every dataset column (reward functions may use them).")
    max_prompt_length: int | None = option(512, "Maximum prompt length in tokens.")
    max_completion_length: int | None = option(256, "Maximum generated tokens.")
    temperature: float = option(1.0, "Sampling temperature (both stages).")
    top_p: float = option(1.0, "Nucleus sampling.")
    top_k: int | None = option(None, "Top-k sampling (None: off).")
    num_value_samples: int = option(8, "Reference samples per prompt for V*.")
    beta1: float = option(0.5, "KL temperature of the V* estimate.")
    filter_all_incorrect: bool = option(True, "Drop prompts whose reference samples all scored 0.")
    beta2: float = option(1e-3, "KL temperature of the Stage 2 regression target.")
    reward_weights: list[float] | None = option(None, "Weight of each reward function.")


class A2POTrainer(_OnlineTrainer):
    """A*-PO on the chunked engine. Same constructor as TRL 1.16's `A2POTrainer`."""

    _name = "A2PO"
    _tag_names = ["a2po"]

    def __init__(
        self,
        model: Any,
        reward_funcs: Any,
        args: A2POConfig | None = None,
        train_dataset: Any = None,
        eval_dataset: Any = None,
        processing_class: Any = None,
        callbacks: list | None = None,
        optimizers: tuple = (None, None),
        peft_config: Any = None,
    ) -> None:
        from transformers import GenerationConfig, set_seed

        args = _coerce_args(args, A2POConfig, model, "A2PO")
        if train_dataset is None:
            raise ValueError("`train_dataset` is required")
        set_seed(args.seed)
        model = self._prepare_model(model, args, peft_config)
        ref_model = None if _model.is_peft_model(model) else _model.create_reference_model(_model.causal_lm(model))
        processing_class = self._prepare_processing_class(processing_class, model, args, padding_side="left")
        tokenizer = getattr(processing_class, "tokenizer", processing_class)
        self.reward_functions = RewardFunctions(reward_funcs, None, args, args.reward_weights)
        self.reward_funcs = self.reward_functions.funcs
        self.reward_weights = self.reward_functions.weights
        super().__init__(model=model, args=args, data_collator=_data.identity_collator, train_dataset=train_dataset,
                         eval_dataset=eval_dataset, processing_class=processing_class, callbacks=callbacks,
                         optimizers=optimizers)
        self._setup_online(model, tokenizer, args, max_new_tokens=args.max_completion_length,
                           temperature=args.temperature, top_p=args.top_p, top_k=args.top_k)
        self.generation_config = GenerationConfig(
            max_new_tokens=args.max_completion_length, do_sample=True, temperature=args.temperature,
            top_p=args.top_p, top_k=args.top_k, pad_token_id=tokenizer.pad_token_id,
        )
        self.ref_model = None
        if ref_model is not None:
            ref_model.requires_grad_(False)
            self.ref_model = _model.prepare_frozen_model(self.accelerator, ref_model)
        self._optimal_values: dict[str, float] | None = None

    def _set_signature_columns_if_needed(self) -> None:
        if self._signature_columns is None:
            self._signature_columns = ["prompt"]

    # ----------------------------------------------------------------------------------------------- helpers
    def _prompts(self, batch: list[dict[str, Any]]) -> tuple[list[str], list[list[int]]]:
        texts = [_data.render_prompt(x, self._tokenizer) for x in batch]
        enc = self._tokenizer(texts, truncation=self.args.max_prompt_length is not None,
                              max_length=self.args.max_prompt_length, add_special_tokens=False)
        return texts, [list(ids) for ids in enc["input_ids"]]

    def _rewards(self, batch: list[dict[str, Any]], prompts: list, completion_ids: list[list[int]],
                 repeat: int = 1) -> torch.Tensor:
        rows = [x for x in batch for _ in range(repeat)]
        completions = self._tokenizer.batch_decode(completion_ids, skip_special_tokens=True)
        per_func = self.reward_functions(rows, [x["prompt"] for x in rows], completions, completion_ids,
                                         self.accelerator.device, {})
        return (per_func * self.reward_weights.to(per_func.device)).sum(dim=1)

    def _sequence_logps(self, model: Any, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        input_ids = torch.cat([batch["prompt_ids"], batch["completion_ids"]], dim=1)
        attention_mask = torch.cat([batch["prompt_mask"], batch["completion_mask"]], dim=1)
        keep = batch["completion_ids"].size(1)
        logps = self._completion_stats(model, input_ids, attention_mask, keep, temperature=1.0)["logp"]
        return (logps * batch["completion_mask"]).sum(dim=1)

    # ------------------------------------------------------------------------------------------------ stage 1
    def _estimate_optimal_values(self) -> None:
        from accelerate.utils import gather_object
        from torch.utils.data import DataLoader

        args, n = self.args, self.args.num_value_samples
        values: dict[str, float] = {}
        all_incorrect: set[str] = set()
        datasets = [self.train_dataset] + ([self.eval_dataset] if self.eval_dataset is not None else [])
        for dataset in datasets:
            loader = self.accelerator.prepare(DataLoader(dataset, batch_size=args.per_device_train_batch_size,
                                                         collate_fn=list))
            for batch in loader:
                texts, prompt_ids = self._prompts(batch)
                repeated = [ids for ids in prompt_ids for _ in range(n)]
                completion_ids, _ = self._generate_completions(repeated, self.generation_config,
                                                               model=self.ref_model)
                rewards = self._rewards(batch, [], completion_ids, repeat=n).view(len(batch), n)
                v_star = optimal_value(rewards, args.beta1)
                for j, text in enumerate(texts):
                    values[text] = v_star[j].item()
                    if rewards[j].sum() == 0:
                        all_incorrect.add(text)
        self._optimal_values = dict(gather_object(list(values.items())))
        all_incorrect = set(gather_object(list(all_incorrect)))
        if args.filter_all_incorrect and all_incorrect:
            tok = self._tokenizer
            self.train_dataset = self.train_dataset.filter(lambda x: _data.render_prompt(x, tok) not in all_incorrect)

    def train(self, *args: Any, **kwargs: Any) -> Any:
        if self._optimal_values is None:
            self._estimate_optimal_values()
        return super().train(*args, **kwargs)

    # ------------------------------------------------------------------------------------------------ stage 2
    def _prepare_inputs(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        if self._optimal_values is None:
            self._estimate_optimal_values()
        device, mode = self.accelerator.device, self._mode
        texts, prompt_ids = self._prompts(inputs)
        completion_ids, _ = self._generate_completions(prompt_ids)
        batch = self._pad_completions(prompt_ids, completion_ids)
        rewards = self._rewards(inputs, [], completion_ids)
        v_star = torch.tensor([self._optimal_values[t] for t in texts], dtype=torch.float32, device=device)
        with torch.no_grad(), _model.reference_context(self.model, self.ref_model) as ref:
            batch["ref_logps"] = self._sequence_logps(ref, batch)
        batch.update(rewards=rewards, v_star=v_star)
        self._metrics[mode]["reward"].append(rewards.mean().item())
        self._metrics[mode]["v_star"].append(v_star.mean().item())
        return batch

    def compute_loss(self, model: Any, inputs: dict[str, Any], return_outputs: bool = False,
                     num_items_in_batch: Any = None) -> torch.Tensor:
        policy_logps = self._sequence_logps(model, inputs)
        loss, metrics = a2po_loss(policy_logps, inputs["ref_logps"], inputs["rewards"], inputs["v_star"],
                                  self.args.beta2)
        for name, value in metrics.items():
            self._metrics[self._mode][name].append(value.item())
        return loss

    def prediction_step(self, model: Any, inputs: Any, prediction_loss_only: bool,
                        ignore_keys: list[str] | None = None) -> tuple:
        inputs = self._prepare_inputs(inputs)
        with torch.no_grad(), self.compute_loss_context_manager():
            loss = self.compute_loss(model, inputs)
        return loss.detach(), None, None
