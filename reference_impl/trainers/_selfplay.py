"""What XPO and Nash-MD share on top of Online DPO: a pair per prompt from two policies, one reward, TRL 1.13's logs.

Both TRL 1.13 trainers (`trl.experimental.xpo`, `trl.experimental.nash_md`, removed in TRL 1.14) subclass Online DPO
and keep its data flow: prompts in, two completions per prompt, scored by the reward. They differ from it, and
between themselves, only in where the second completion comes from (`_sample_pair`) and in the loss
(`compute_loss`). Here: the single-reward rule of both, the log-probs of the policy on some rows of the pair batch,
and the metrics every step logs (the loss' own, the scores of both sides, EOS rates, the coefficients). Both also
take TRL 1.0's `judge=` (a pairwise judge ranks the pair instead of the reward; removed in TRL 1.1), keyword only,
through Online DPO's judge path (`OnlineDPOTrainer._judge`) with the completions stripped as TRL 1.0's XPO and
Nash-MD did.
"""

from __future__ import annotations

from typing import Any

import torch

from .online_dpo import OnlineDPOTrainer


def check_one_reward(reward_funcs: Any, trainer: str, judge: Any = None) -> None:
    """TRL 1.13's XPO and Nash-MD score with exactly one reward function or model; with a judge (TRL 1.0's `judge=`,
    which wins over the reward functions, see `OnlineDPOTrainer`) there is nothing to check."""
    if judge is not None:
        return
    if reward_funcs is None or (isinstance(reward_funcs, list) and len(reward_funcs) != 1):
        raise ValueError(f"{trainer} only supports one reward function/model.")


class _SampledPairTrainer(OnlineDPOTrainer):
    """Online DPO's pipeline with the rows laid out as `[B completions of the policy, B of the other policy]`."""

    _judge_strips = True  # TRL 1.0's XPO and Nash-MD `_compute_judge` strip each decoded completion

    def _policy_logps(self, model: Any, inputs: dict[str, Any], rows: slice = slice(None)) -> torch.Tensor:
        """Per-token log-probs `[rows, T]` of the completions under `model` (at temperature 1, like TRL)."""
        input_ids, attention_mask, keep = self._truncated_inputs(inputs)
        return self._completion_stats(model, input_ids[rows], attention_mask[rows], keep, temperature=1.0)["logp"]

    def _log_pair_metrics(self, metrics: dict[str, torch.Tensor], inputs: dict[str, Any],
                          **coefficients: float) -> None:
        """The loss' metrics, then TRL 1.13's EOS rates of both sides and the coefficients of this step."""
        m = self._metrics[self._mode]
        for name, value in metrics.items():
            m[name].append(self._gathered_mean(value))
        policy_eos, other_eos = inputs["contain_eos"].float().chunk(2)
        m["val/model_contain_eos_token"].append(self._gathered_mean(policy_eos))
        m["val/ref_contain_eos_token"].append(self._gathered_mean(other_eos))
        for name, value in coefficients.items():
            m[name].append(value)
