"""REINFORCE Leave-One-Out: `RLOOTrainer` and `RLOOConfig`, drop-in for TRL 1.16's.

Same generation/batching as GRPO (`_GroupedOnlineTrainer`). The KL to the reference is *in the reward*: each
completion's reward becomes `r - beta * sum_t (log pi_old - log pi_ref)`; the baseline of a completion is the mean
reward of the other completions of its prompt (`reference_impl.losses.policy.rloo_advantages`); the loss is the
sequence-level clipped surrogate `rloo_loss`. `normalize_advantages` and `reward_clip_range` as in TRL.
Logged metrics (TRL's names): `reward`, `reward_std`, `rewards/<func>/mean|std`, `frac_reward_zero_std`, `kl`,
`entropy`, `clip_ratio/*`, `completions/*`, `num_tokens`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from reference_impl.losses.policy import rloo_advantages, rloo_loss

from . import _model
from ._base import _coerce_args
from ._config import option
from ._online import nanstd
from .grpo import GRPOTrainer, _GroupedConfig


@dataclass
class RLOOConfig(_GroupedConfig):
    """TRL 1.16 `RLOOConfig` fields."""

    num_generations: int = option(2, "Completions sampled per prompt.")
    beta: float = option(0.05, "Coefficient of the KL penalty subtracted from the reward.")
    normalize_advantages: bool = option(False, "Normalise advantages over the generation batch.")
    reward_clip_range: tuple[float, float] | None = option(None, "Clamp the summed reward to this range.")


class RLOOTrainer(GRPOTrainer):
    """RLOO on the chunked engine. Same constructor as TRL 1.16's `RLOOTrainer`."""

    _name = "RLOO"
    _tag_names = ["rloo"]
    loss_is_scaled_for_ga = False

    def __init__(
        self,
        model: Any,
        reward_funcs: Any,
        args: RLOOConfig | None = None,
        train_dataset: Any = None,
        eval_dataset: Any = None,
        processing_class: Any = None,
        reward_processing_classes: Any = None,
        callbacks: list | None = None,
        optimizers: tuple = (None, None),
        quantization_config: Any = None,
        peft_config: Any = None,
    ) -> None:
        args = _coerce_args(args, RLOOConfig, model, "RLOO")
        if quantization_config is not None:
            args.model_init_kwargs = {**(args.model_init_kwargs or {}), "quantization_config": quantization_config}
        self.rollout_func = None
        self._init_grouped(model, reward_funcs, args, train_dataset, eval_dataset, processing_class,
                           reward_processing_classes, callbacks, optimizers, peft_config)

    def _score_old_and_ref(self, batch: dict[str, Any], input_ids: torch.Tensor, attention_mask: torch.Tensor,
                           keep: int, bs: int) -> None:
        with torch.no_grad(), _model.no_gradient_checkpointing(self.model, self.args):
            old = self._completion_stats(self.model, input_ids, attention_mask, keep, batch_size=bs)["logp"]
            batch["old_logps"] = (old * batch["completion_mask"]).sum(1)
            if self.beta != 0.0:
                with _model.reference_context(self.model, self.ref_model) as ref:
                    refp = self._completion_stats(ref, input_ids, attention_mask, keep, batch_size=bs)["logp"]
                batch["_per_token_kl"] = old - refp

    def _advantages(self, rewards_per_func: torch.Tensor, batch: dict[str, Any], num_local: int) -> torch.Tensor:
        args, device, mode = self.args, rewards_per_func.device, self._mode
        g = self.num_generations if mode == "train" else self.num_generations_eval
        unscorable = torch.isnan(rewards_per_func).all(dim=1)
        rewards = (rewards_per_func * self.reward_weights.to(device).unsqueeze(0)).nansum(dim=1)
        rewards[unscorable] = torch.nan
        if args.reward_clip_range:
            rewards = rewards.clamp(min=args.reward_clip_range[0], max=args.reward_clip_range[1])
        if self.beta != 0.0:
            per_token_kl, mask = batch.pop("_per_token_kl"), batch["completion_mask"]
            rewards = rewards - self.beta * self.accelerator.gather((per_token_kl * mask).sum(-1))
            stats = self.accelerator.reduce(torch.stack([(per_token_kl * mask).sum(), mask.sum().float()]),
                                            reduction="sum")
            self._metrics[mode]["kl"].append((stats[0] / stats[1].clamp(min=1.0)).item())
        advantages, _ = rloo_advantages(rewards, g, normalize_advantages=args.normalize_advantages)
        std = nanstd(rewards.view(-1, g), dim=1) if g > 1 else torch.zeros(rewards.numel() // g, device=device)
        self._metrics[mode]["frac_reward_zero_std"].append(torch.isclose(std, torch.zeros_like(std)).float().mean().item())
        start = self.accelerator.process_index * num_local
        return advantages[start : start + num_local]

    def compute_loss(self, model: Any, inputs: dict[str, Any], return_outputs: bool = False,
                     num_items_in_batch: Any = None) -> torch.Tensor:
        mode = self._mode
        input_ids = torch.cat([inputs["prompt_ids"], inputs["completion_ids"]], dim=1)
        attention_mask = torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], dim=1)
        stats = self._completion_stats(model, input_ids, attention_mask, inputs["completion_ids"].size(1),
                                       outputs=("logp", "entropy"))
        loss, metrics = rloo_loss(stats["logp"], inputs["completion_mask"], inputs["advantages"], inputs["old_logps"],
                                  epsilon=self.args.epsilon, epsilon_high=self.args.epsilon_high,
                                  entropies=stats["entropy"])
        mask = inputs["completion_mask"]
        self._metrics[mode]["entropy"].append(self._masked_mean(stats["entropy"], mask))
        for name, value in metrics.items():
            if name.startswith("clip_ratio"):
                self._metrics[mode][name].append(self._gathered_mean(value))
        return loss
