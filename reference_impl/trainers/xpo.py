"""Exploratory Preference Optimization: `XPOTrainer` and `XPOConfig`, a home for TRL's XPO (`trl.experimental.xpo`,
removed in TRL 1.14 with no successor; constructor and config follow TRL 1.13's).

XPO (Xie et al. 2024, "Exploratory Preference Optimization: Harnessing Implicit Q*-Approximation for
Sample-Efficient RLHF", https://huggingface.co/papers/2405.21046) is Online DPO with the second completion of each
pair sampled from the reference policy instead of the policy, and an exploration bonus: each step samples `y ~ pi`
and `y' ~ pi_ref` per prompt, ranks the two by the reward (ties go to `y`), and minimises the DPO loss of the ranked
pair plus `alpha * log pi(y')` (`reference_impl.losses.online.xpo_loss`). `alpha` and `beta` may be lists: one value
per epoch. Reference: `ref_model`, else the PEFT policy with adapters disabled, else a frozen copy of the policy.
Logged metrics (TRL 1.13's names): `loss/{dpo,xpo}`, `objective/{kl,entropy,model_scores,ref_scores,scores_margin}`,
`rewards/{chosen,rejected,accuracies,margins}`, `logps/{chosen,rejected}`,
`val/{model,ref}_contain_eos_token`, `alpha`, `beta`.

`judge=` (keyword only; TRL 1.0's XPO, removed in 1.1): a pairwise judge ranks the pair instead of the reward, as
TRL 1.0 did: `judge.judge(prompts, [[y, y'], ...])` (each decoded completion stripped; chat prompts and completions
rendered with TRL's `SIMPLE_CHAT_TEMPLATE`), an answer of 0 makes `y` chosen, anything else `y'`; the loss is the
same DPO + exploration term on that ranking. Given with `reward_funcs`, the judge wins (a warning says so); judged
steps apply no `missing_eos_penalty` and log no `objective/{model_scores,ref_scores,scores_margin}`.

Differences from TRL 1.13, all supersets: the reward may be a callable as well as a model (scored on decoded text,
like Online DPO here), and a PEFT policy without `ref_model` samples `y'` with its adapters disabled (TRL 1.13
sampled from `get_base_model()`, whose adapters stay active).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from reference_impl.losses.online import xpo_loss

from . import _model
from ._base import _coerce_args
from ._config import option, per_epoch
from ._online import unwrap_for_generation
from ._selfplay import _SampledPairTrainer, check_one_reward
from .online_dpo import OnlineDPOConfig, PairwiseJudge


@dataclass
class XPOConfig(OnlineDPOConfig):
    """TRL 1.13 `XPOConfig` fields (`trl.experimental.xpo`): Online DPO's plus `alpha`."""

    alpha: list[float] = option(
        factory=lambda: [1e-5], help="Weight of the XPO exploration term, or one per epoch (the last one after).")

    def __post_init__(self) -> None:
        super().__post_init__()
        if isinstance(self.alpha, list) and len(self.alpha) == 1:
            self.alpha = self.alpha[0]


class XPOTrainer(_SampledPairTrainer):
    """XPO on the chunked engine. Constructor as TRL 1.13's `trl.experimental.xpo.XPOTrainer`, plus TRL 1.0's `judge`
    (keyword only: 1.0 took it fourth, where 1.13 takes `args`)."""

    _name = "XPO"
    _tag_names = ["xpo"]

    def __init__(
        self,
        model: Any = None,
        ref_model: Any = None,
        reward_funcs: Any = None,
        args: XPOConfig | None = None,
        data_collator: Callable | None = None,
        train_dataset: Any = None,
        eval_dataset: Any = None,
        processing_class: Any = None,
        reward_processing_classes: Any = None,
        peft_config: Any = None,
        compute_metrics: Callable | None = None,
        callbacks: list | None = None,
        optimizers: tuple = (None, None),
        preprocess_logits_for_metrics: Callable | None = None,
        *,
        judge: PairwiseJudge | None = None,
    ) -> None:
        check_one_reward(reward_funcs, "XPOTrainer", judge)
        args = _coerce_args(args, XPOConfig, model, "XPO")
        super().__init__(
            model=model, ref_model=ref_model, reward_funcs=reward_funcs, args=args, data_collator=data_collator,
            train_dataset=train_dataset, eval_dataset=eval_dataset, processing_class=processing_class,
            reward_processing_classes=reward_processing_classes, peft_config=peft_config,
            compute_metrics=compute_metrics, callbacks=callbacks, optimizers=optimizers,
            preprocess_logits_for_metrics=preprocess_logits_for_metrics, judge=judge,
        )
        self._alpha = args.alpha

    @property
    def alpha(self) -> float:
        return per_epoch(self._alpha, self.state.epoch)

    def _sample_pair(self, prompt_ids: list[list[int]]) -> list[list[int]]:
        """`y ~ pi` for every prompt (vLLM when configured), then `y' ~ pi_ref` (always local generation)."""
        policy, _ = self._generate_completions(prompt_ids)
        with _model.reference_context(self.model, self.ref_model) as ref:
            if ref is self.model:  # the PEFT policy, adapters disabled: not what a vLLM server holds
                with unwrap_for_generation(self, self.args.ds3_gather_for_generation) as unwrapped:
                    reference = self._generate_with(unwrapped, prompt_ids, self.generation_config)
            else:
                reference, _ = self._generate_completions(prompt_ids, model=ref)
        return policy + reference

    def compute_loss(self, model: Any, inputs: dict[str, Any], return_outputs: bool = False,
                     num_items_in_batch: Any = None) -> torch.Tensor:
        beta, alpha = self.beta, self.alpha
        mask = inputs["completion_mask"].float()
        policy_seq = (self._policy_logps(model, inputs) * mask).sum(1)
        ref_seq = (inputs["ref_logps"] * mask).sum(1)
        n = policy_seq.size(0) // 2
        policy_wins = inputs["chosen_idx"] < n  # Online DPO's ranking: the policy's sample won (or tied)
        loss, metrics = xpo_loss(policy_seq, ref_seq, policy_wins, beta=beta, alpha=alpha,
                                 loss_type=self.args.loss_type)
        if "rewards" in inputs:  # judged pairs have no scores to log (TRL 1.0)
            model_scores, ref_scores = inputs["rewards"].chunk(2)
            metrics.update({"objective/model_scores": model_scores, "objective/ref_scores": ref_scores,
                            "objective/scores_margin": model_scores - ref_scores})
        self._log_pair_metrics(metrics, inputs, alpha=alpha, beta=beta)
        return loss
