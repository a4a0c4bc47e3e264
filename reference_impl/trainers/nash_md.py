"""Nash Mirror Descent: `NashMDTrainer` and `NashMDConfig`, a home for TRL's Nash-MD (`trl.experimental.nash_md`,
removed in TRL 1.14 with no successor; constructor and config follow TRL 1.13's).

Nash-MD (Munos et al. 2023, "Nash Learning from Human Feedback", https://huggingface.co/papers/2312.00886) looks
for the Nash equilibrium of the preference game by playing the policy against a regularised copy of itself. Each
step samples `y ~ pi` and `y' ~ pi_mix` per prompt, where `pi_mix` is the geometric mixture
`pi_mix ∝ pi^(1 - c) * pi_ref^c` (`mixture_coef` = c, token by token: `log_softmax((1 - c) * logits_pi +
c * logits_ref)`, `sample_geometric_mixture`), turns the two rewards into the preference `P(y > y') = sig(r(y) -
r(y'))`, and takes a REINFORCE step on `y` with a KL penalty to the reference (`reference_impl.losses.online.
nash_md_loss`). `mixture_coef` and `beta` may be lists: one value per epoch. Reference: `ref_model`, else the PEFT
policy with adapters disabled, else a frozen copy of the policy. Logged metrics (TRL 1.13's names): `loss/{kl,score}`,
`objective/entropy`, `rewards/{probabilities,accuracies,margins,chosen,rejected}`, `logps/{chosen,rejected}`,
`val/{model,ref}_contain_eos_token`, `beta`, `mixture_coef`.

`judge=` (keyword only; TRL 1.0's Nash-MD, removed in 1.1): a pairwise judge gives the preference instead of the
reward, as TRL 1.0 did: `P(y > y') = judge.judge(prompts, [[y, y'], ...], return_scores=True)` (each decoded
completion stripped; chat prompts and completions rendered with TRL's `SIMPLE_CHAT_TEMPLATE`), the same REINFORCE
loss on it. Only a judge that returns scores fits (`PairRMJudge`; TRL's HF and OpenAI judges raise, as in TRL).
Given with `reward_funcs`, the judge wins (a warning says so); judged steps apply no `missing_eos_penalty` and log
no `rewards/{chosen,rejected}`.

Differences from TRL 1.13, all supersets: the reward may be a callable as well as a model (scored on decoded text,
like Online DPO here); a PEFT policy without `ref_model` mixes in the policy with its adapters disabled (TRL 1.13
used `get_base_model()`, whose adapters stay active). The mixture is sampled by a plain loop (no KV cache, as TRL's
`GeometricMixtureWrapper` also disables it) applying the config's repetition penalty, temperature, top-k, top-p and
min-p in transformers' order; other `generation_kwargs` apply to the policy's own samples only.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from reference_impl.losses.online import nash_md_loss

from . import _data, _model
from ._base import _coerce_args
from ._config import option, per_epoch
from ._online import unwrap_for_generation
from ._selfplay import _SampledPairTrainer, check_one_reward
from .online_dpo import OnlineDPOConfig, PairwiseJudge


@dataclass
class NashMDConfig(OnlineDPOConfig):
    """TRL 1.13 `NashMDConfig` fields (`trl.experimental.nash_md`): Online DPO's plus `mixture_coef`."""

    mixture_coef: list[float] = option(
        factory=lambda: [0.5], help="Weight c of the reference in the mixture pi^(1-c) pi_ref^c, or one per epoch.")

    def __post_init__(self) -> None:
        super().__post_init__()
        if isinstance(self.mixture_coef, list) and len(self.mixture_coef) == 1:
            self.mixture_coef = self.mixture_coef[0]


def mixture_logits_processors(generation_config: Any) -> Any:
    """The sampling transforms of `generation_config` that apply to the mixture, in transformers' order."""
    from transformers import (
        LogitsProcessorList,
        MinPLogitsWarper,
        RepetitionPenaltyLogitsProcessor,
        TemperatureLogitsWarper,
        TopKLogitsWarper,
        TopPLogitsWarper,
    )

    g = generation_config
    out = LogitsProcessorList()
    if g.repetition_penalty is not None and g.repetition_penalty != 1.0:
        out.append(RepetitionPenaltyLogitsProcessor(penalty=g.repetition_penalty))
    if g.temperature is not None and g.temperature != 1.0:
        out.append(TemperatureLogitsWarper(g.temperature))
    if g.top_k:
        out.append(TopKLogitsWarper(top_k=g.top_k))
    if g.top_p is not None and g.top_p < 1.0:
        out.append(TopPLogitsWarper(top_p=g.top_p))
    if g.min_p is not None:
        out.append(MinPLogitsWarper(min_p=g.min_p))
    return out


def _next_token_logits(model: nn.Module, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """fp32 logits of the next token after each (left-padded) row; position ids from the mask, as `generate`, and
    only the last position projected onto the vocabulary where the model can (`logits_to_keep`)."""
    kwargs: dict[str, Any] = {}
    accepted = inspect.signature(type(_model.causal_lm(model)).forward).parameters
    if "position_ids" in accepted:
        kwargs["position_ids"] = (mask.cumsum(-1) - 1).clamp(min=0)
    if "logits_to_keep" in accepted:
        kwargs["logits_to_keep"] = 1
    return model(input_ids=ids, attention_mask=mask, use_cache=False, **kwargs).logits[:, -1].float()


@torch.no_grad()
def sample_geometric_mixture(
    policy: nn.Module,
    reference: Callable[[], Any],
    prompt_ids: torch.Tensor,
    prompt_mask: torch.Tensor,
    *,
    mixture_coef: float,
    max_new_tokens: int,
    eos_token_ids: Sequence[int],
    logits_processor: Any = None,
) -> list[list[int]]:
    """Sample one completion per left-padded prompt from `log_softmax((1 - c) logits_pi + c logits_ref)`.

    `reference()` is a context manager yielding the module that scores the reference (`_model.reference_context`),
    entered at each token so a PEFT policy can be its own reference. Each completion is cut after its first EOS.
    """
    ids, mask = prompt_ids, prompt_mask
    done = torch.zeros(ids.size(0), dtype=torch.bool, device=ids.device)
    eos = torch.tensor(list(eos_token_ids), device=ids.device)
    new: list[torch.Tensor] = []
    for _ in range(max_new_tokens):
        policy_logits = _next_token_logits(policy, ids, mask)
        with reference() as ref:
            ref_logits = _next_token_logits(ref, ids, mask)
        scores = torch.log_softmax((1 - mixture_coef) * policy_logits + mixture_coef * ref_logits, dim=-1)
        if logits_processor is not None:
            scores = logits_processor(ids, scores)
        token = torch.multinomial(torch.softmax(scores, dim=-1), 1).squeeze(1)
        token = torch.where(done, torch.zeros_like(token), token)
        new.append(torch.where(done, torch.full_like(token, -1), token))
        ids = torch.cat([ids, token.unsqueeze(1)], dim=1)
        mask = torch.cat([mask, (~done).long().unsqueeze(1)], dim=1)
        done = done | torch.isin(token, eos)
        if done.all():
            break
    if not new:
        return [[] for _ in range(ids.size(0))]
    completions = torch.stack(new, dim=1).cpu()
    return [[t for t in row.tolist() if t >= 0] for row in completions]


class NashMDTrainer(_SampledPairTrainer):
    """Nash-MD on the chunked engine. Constructor as TRL 1.13's `trl.experimental.nash_md.NashMDTrainer` (no
    `reward_processing_classes`: the reward is scored with `processing_class`, as in TRL), plus TRL 1.0's `judge`
    (keyword only: 1.0 took it fourth, where 1.13 takes `args`)."""

    _name = "Nash-MD"
    _tag_names = ["nash-md"]

    def __init__(
        self,
        model: Any = None,
        ref_model: Any = None,
        reward_funcs: Any = None,
        args: NashMDConfig | None = None,
        data_collator: Callable | None = None,
        train_dataset: Any = None,
        eval_dataset: Any = None,
        processing_class: Any = None,
        peft_config: Any = None,
        compute_metrics: Callable | None = None,
        callbacks: list | None = None,
        optimizers: tuple = (None, None),
        preprocess_logits_for_metrics: Callable | None = None,
        *,
        judge: PairwiseJudge | None = None,
    ) -> None:
        check_one_reward(reward_funcs, "NashMDTrainer", judge)
        args = _coerce_args(args, NashMDConfig, model, "NashMD")
        super().__init__(
            model=model, ref_model=ref_model, reward_funcs=reward_funcs, args=args, data_collator=data_collator,
            train_dataset=train_dataset, eval_dataset=eval_dataset, processing_class=processing_class,
            reward_processing_classes=processing_class, peft_config=peft_config, compute_metrics=compute_metrics,
            callbacks=callbacks, optimizers=optimizers, preprocess_logits_for_metrics=preprocess_logits_for_metrics,
            judge=judge,
        )
        self._mixture_coef = args.mixture_coef

    @property
    def mixture_coef(self) -> float:
        return per_epoch(self._mixture_coef, self.state.epoch)

    def _sample_pair(self, prompt_ids: list[list[int]]) -> list[list[int]]:
        """`y ~ pi` for every prompt (vLLM when configured), then `y' ~ pi_mix` (local, token by token)."""
        policy, _ = self._generate_completions(prompt_ids)
        device = self.accelerator.device
        ids = _data.pad_lists(prompt_ids, self._tokenizer.pad_token_id, "left").to(device)
        mask = _data.pad_lists([[1] * len(p) for p in prompt_ids], 0, "left").to(device)
        with unwrap_for_generation(self, self.args.ds3_gather_for_generation) as unwrapped:
            mixture = sample_geometric_mixture(
                unwrapped, lambda: _model.reference_context(unwrapped, self.ref_model), ids, mask,
                mixture_coef=self.mixture_coef, max_new_tokens=self.generation_config.max_new_tokens,
                eos_token_ids=self.eos_token_ids, logits_processor=mixture_logits_processors(self.generation_config),
            )
        return policy + mixture

    def _judge(self, prompts: list, completions: list) -> dict[str, torch.Tensor]:
        """TRL 1.0's judged Nash-MD: the judge's scores, `judge.judge(prompts, [[y, y'], ...], return_scores=True)`,
        are `P(y > y')` itself (a judge without `return_scores`, such as TRL's HF and OpenAI judges, fails as it did
        in TRL). `first_better` (`P >= 0.5`, the reward path's `r(y) >= r(y')`) only fills Online DPO's pairing."""
        scores = self.judge.judge(*self._judge_pairs(prompts, completions), return_scores=True)
        probability = torch.tensor(scores, dtype=torch.float32, device=self.accelerator.device)
        return {"first_better": probability >= 0.5, "judge_probability": probability}

    def compute_loss(self, model: Any, inputs: dict[str, Any], return_outputs: bool = False,
                     num_items_in_batch: Any = None) -> torch.Tensor:
        beta = self.beta
        n = inputs["completion_mask"].size(0) // 2
        policy = slice(0, n)  # only the policy's own samples are trained on
        if "rewards" in inputs:
            model_scores, mixture_scores = inputs["rewards"].chunk(2)
            probability = torch.sigmoid(model_scores - mixture_scores)
        else:  # a judge's P(y > y'), TRL 1.0
            probability = inputs["judge_probability"]
        loss, metrics = nash_md_loss(self._policy_logps(model, inputs, policy), inputs["ref_logps"][policy],
                                     inputs["completion_mask"][policy], probability, beta=beta)
        if "rewards" in inputs:  # judged pairs have no scores to log (TRL 1.0)
            metrics.update({"rewards/chosen": model_scores, "rewards/rejected": mixture_scores})
        self._log_pair_metrics(metrics, inputs, beta=beta, mixture_coef=self.mixture_coef)
        return loss
