"""Online DPO: `OnlineDPOTrainer` and `OnlineDPOConfig`, drop-in for TRL 1.16's `trl.experimental.online_dpo`.

Each step samples two completions per prompt from the current policy, scores both with the reward functions
(`missing_eos_penalty` subtracted from completions without EOS), takes the better one as chosen, and applies the DPO
loss (`sigmoid` or `ipo`, as in TRL: sequence log-ratios, IPO not length-normalised) through
`reference_impl.losses.preference.dpo_loss`. Log-probs come from the chunked engine (no temperature, like TRL).
`beta` may be a list: one value per epoch. Reference: `ref_model`, else the PEFT policy with adapters disabled, else
`create_reference_model(model)`. Logged metrics (TRL's names): `objective/{kl,entropy,non_score_reward,rlhf_reward,
scores,scores_margin}`, `rewards/{chosen,rejected,accuracies,margins}`, `logps/{chosen,rejected}`,
`val/contain_eos_token`, `beta`.

`judge=` (keyword only; TRL 1.0's Online DPO, removed in 1.1): a pairwise judge ranks the two completions of each
prompt instead of the reward functions, exactly as TRL 1.0 did: `judge.judge(prompts, [[first, second], ...])`
returns per prompt the index of the preferred completion (anything but 0, e.g. the -1 of an unreadable answer, picks
the second); chat prompts and completions are rendered with TRL's `SIMPLE_CHAT_TEMPLATE` first, so the judge never
sees the policy's special tokens. Given with `reward_funcs`, the judge wins (a warning says the reward functions are
ignored). Judging applies no `missing_eos_penalty` and logs no `objective/{scores,scores_margin,rlhf_reward}`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from reference_impl.losses.preference import dpo_loss

from . import _data, _model
from ._base import _coerce_args
from ._config import BaseConfig, option, per_epoch, unsupported
from ._online import RewardFunctions, _OnlineTrainer, check_generation_fields

logger = logging.getLogger(__name__)


class PairwiseJudge(Protocol):
    """What `judge=` takes: TRL's `BasePairwiseJudge` contract (`compat.trl.BasePairwiseJudge` and its subclasses)."""

    def judge(self, prompts: list[str], completions: list[list[str]], shuffle_order: bool = True) -> list[int]: ...


def render_for_judge(messages: list[dict[str, Any]]) -> str:
    """A conversation as TRL's `SIMPLE_CHAT_TEMPLATE` renders it (`"User: hi\n\nAssistant: hello\n\n"`)."""
    return "".join(m["role"].capitalize() + ": " + m["content"] + "\n\n" for m in messages)


@dataclass
class OnlineDPOConfig(BaseConfig):
    """TRL 1.16 `OnlineDPOConfig` fields."""

    learning_rate: float = option(5e-7, "Initial AdamW learning rate.")
    remove_unused_columns: bool = option(False, "Keep every dataset column (reward functions may use them).")
    reward_model_path: str | None = option(None, "Unused (TRL keeps it for its scripts).")
    judge: str | None = option(None, "Unused: the name of a judge, for scripts (TRL 1.0's field; pass `judge=`).")
    max_new_tokens: int = option(64, "Maximum generated tokens per completion.")
    max_length: int = option(512, "Maximum prompt+completion length scored (the prompt is cut from the left).")
    temperature: float = option(0.9, "Sampling temperature.")
    top_p: float = option(1.0, "Nucleus sampling.")
    top_k: int = option(0, "Top-k sampling (0: off).")
    min_p: float | None = option(None, "Min-p sampling.")
    repetition_penalty: float = option(1.0, "Repetition penalty.")
    generation_kwargs: dict | None = option(None, "Extra GenerationConfig arguments.")
    cache_implementation: str | None = option(None, "KV cache implementation for model.generate.")
    missing_eos_penalty: float | None = option(None, "Subtracted from the score of completions without EOS.")
    beta: list[float] = option(factory=lambda: [0.1], help="DPO beta, or one per epoch (a single value is a float).")
    loss_type: str = option("sigmoid", "'sigmoid' or 'ipo'.")
    disable_dropout: bool = option(True, "Disable dropout in the policy and reference.")
    use_vllm: bool = option(False, "Generate with a vLLM server (OpenAI-compatible API).")
    vllm_model_impl: str = unsupported("vllm", "colocated vLLM")
    vllm_structured_outputs_regex: str | None = unsupported(None, "structured outputs")
    vllm_gpu_memory_utilization: float = unsupported(0.55, "colocated vLLM")
    vllm_mode: str = option("colocate", "Only 'server' is supported here.")
    vllm_server_base_url: str | None = option(None, "Base URL of the vLLM server.")
    vllm_server_host: str = option("0.0.0.0", "Host of the vLLM server.")
    vllm_server_port: int = option(8000, "Port of the vLLM server.")
    vllm_server_timeout: float = option(240.0, "Seconds to wait for the vLLM server.")
    vllm_group_port: int = unsupported(51216, "NCCL weight sync of `trl vllm-serve`")
    vllm_tensor_parallel_size: int = unsupported(1, "colocated vLLM")
    vllm_enable_sleep_mode: bool = unsupported(False, "colocated vLLM")
    ds3_gather_for_generation: bool = option(True, "Gather ZeRO-3 weights for generation.")
    reward_weights: list[float] | None = option(None, "Weight of each reward function.")

    def __post_init__(self) -> None:
        if isinstance(self.beta, list) and len(self.beta) == 1:
            self.beta = self.beta[0]
        super().__post_init__()
        check_generation_fields(self)
        if self.loss_type not in ("sigmoid", "ipo"):
            raise ValueError(f"Online DPO loss_type must be 'sigmoid' or 'ipo', got {self.loss_type!r}.")


class OnlineDPOTrainer(_OnlineTrainer):
    """Online DPO on the chunked engine. Same constructor as TRL 1.16's `OnlineDPOTrainer`, plus TRL 1.0's `judge`
    (keyword only: 1.0 took it fourth, where 1.16 takes `args`)."""

    _name = "Online DPO"
    _tag_names = ["online-dpo"]
    loss_is_scaled_for_ga = False
    _judge_strips = False  # TRL 1.0's Online DPO hands the judge the decoded completions as they are

    def __init__(
        self,
        model: Any,
        ref_model: Any = None,
        reward_funcs: Any = None,
        args: OnlineDPOConfig | None = None,
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
        from transformers import set_seed

        args = _coerce_args(args, OnlineDPOConfig, model, "OnlineDPO")
        if train_dataset is None:
            raise ValueError("`train_dataset` is required")
        if judge is None and reward_funcs is None:
            raise ValueError("One of `judge` or `reward_funcs` must be provided.")
        if judge is not None and reward_funcs is not None:
            logger.warning("Both `judge` and `reward_funcs` are provided. Using `judge` and ignoring `reward_funcs`.")
            reward_funcs = None
        if ref_model is not None and ref_model is model:
            raise ValueError("`model` and `ref_model` cannot be the same object; omit `ref_model` to use a copy.")
        set_seed(args.seed)
        model = self._prepare_model(model, args, peft_config)
        processing_class = self._prepare_processing_class(processing_class, model, args, padding_side="left")
        tokenizer = getattr(processing_class, "tokenizer", processing_class)
        self.judge = judge
        self.reward_functions = self.reward_funcs = self.reward_weights = None
        if judge is None:
            self.reward_functions = RewardFunctions(reward_funcs, reward_processing_classes, args, args.reward_weights)
            self.reward_funcs = self.reward_functions.funcs
            self.reward_weights = self.reward_functions.weights
        if ref_model is not None:
            ref_model = _model.load_causal_lm(ref_model, args)
        elif not _model.is_peft_model(model):
            ref_model = _model.create_reference_model(_model.causal_lm(model))
        if ref_model is not None:
            _model.add_engine_head(_model.causal_lm(ref_model))
            if args.disable_dropout:
                _model.disable_dropout(ref_model)
        self._beta = args.beta
        super().__init__(
            model=model, args=args, data_collator=data_collator or _data.identity_collator,
            train_dataset=train_dataset, eval_dataset=eval_dataset, processing_class=processing_class,
            compute_metrics=compute_metrics, callbacks=callbacks, optimizers=optimizers,
            preprocess_logits_for_metrics=preprocess_logits_for_metrics,
        )
        self._setup_online(model, tokenizer, args, max_new_tokens=args.max_new_tokens, temperature=args.temperature,
                           top_p=args.top_p, top_k=args.top_k, min_p=args.min_p,
                           repetition_penalty=args.repetition_penalty)
        self.ref_model = None
        if ref_model is not None:
            ref_model.requires_grad_(False)
            self.ref_model = _model.prepare_frozen_model(self.accelerator, ref_model.eval())

    @property
    def beta(self) -> float:
        return per_epoch(self._beta, self.state.epoch)

    def _set_signature_columns_if_needed(self) -> None:
        if self._signature_columns is None:
            self._signature_columns = ["prompt"]

    # ------------------------------------------------------------------------------------------- generation
    def _prompt_ids(self, inputs: list[dict[str, Any]]) -> list[list[int]]:
        texts = [_data.render_prompt({"prompt": x["prompt"]}, self._tokenizer) for x in inputs]
        return [list(ids) for ids in self._tokenizer(text=texts, add_special_tokens=False)["input_ids"]]

    def _truncated_inputs(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor, int]:
        cut = max(batch["prompt_ids"].size(1) + batch["completion_ids"].size(1) - self.args.max_length, 0)
        input_ids = torch.cat([batch["prompt_ids"][:, cut:], batch["completion_ids"]], dim=1)
        attention_mask = torch.cat([batch["prompt_mask"][:, cut:], batch["completion_mask"]], dim=1)
        return input_ids, attention_mask, batch["completion_ids"].size(1)

    def _sample_pair(self, prompt_ids: list[list[int]]) -> list[list[int]]:
        """Two completions per prompt, all first ones then all second ones: both from the policy here (XPO and
        Nash-MD sample the second from another policy)."""
        completion_ids, _ = self._generate_completions(prompt_ids + prompt_ids)
        return completion_ids

    def _prepare_inputs(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        """Sample two completions per prompt, score them, pick chosen/rejected; reference log-probs (no grad)."""
        device, n = self.accelerator.device, len(inputs)
        prompts = [x["prompt"] for x in inputs]
        prompt_ids = self._prompt_ids(inputs)
        completion_ids = self._sample_pair(prompt_ids)
        batch = self._pad_completions(prompt_ids + prompt_ids, completion_ids)
        contain_eos = torch.tensor([bool(c) and c[-1] in self.eos_token_ids for c in completion_ids], device=device)
        input_ids, attention_mask, keep = self._truncated_inputs(batch)
        with torch.no_grad(), _model.no_gradient_checkpointing(self.model, self.args), \
                _model.reference_context(self.model, self.ref_model) as ref:
            ref_logps = self._completion_stats(ref, input_ids, attention_mask, keep, temperature=1.0)["logp"]
        completions = self._decode(completion_ids, prompts)
        if self.judge is not None:
            verdict = self._judge(prompts, completions)
            better = verdict.pop("first_better")
            batch.update(verdict)
        else:
            batch["rewards"] = rewards = self._rewards(inputs, completions, completion_ids, contain_eos)
            first, second = rewards.split(n)
            better = first >= second
        idx = torch.arange(n, device=device)
        chosen, rejected = idx + (~better * n), idx + (better * n)
        batch.update(ref_logps=ref_logps, chosen_idx=chosen, rejected_idx=rejected, contain_eos=contain_eos)
        return batch

    def _rewards(self, inputs: list[dict[str, Any]], completions: list, completion_ids: list[list[int]],
                 contain_eos: torch.Tensor) -> torch.Tensor:
        """`[2n]` weighted rewards of the completions (first completions of every prompt, then the second ones)."""
        device, prompts = contain_eos.device, [x["prompt"] for x in inputs]
        extra = {k: [x[k] for x in inputs] * 2 for k in inputs[0] if k != "prompt"}
        per_func = self.reward_functions([{"prompt": p, **{k: v[i] for k, v in extra.items()}}
                                          for i, p in enumerate(prompts * 2)],
                                         prompts * 2, completions, completion_ids, device,
                                         {"trainer_state": self.state})
        rewards = (per_func * self.reward_weights.to(device).unsqueeze(0)).nansum(dim=1)
        if self.args.missing_eos_penalty is not None:
            rewards[~contain_eos] -= self.args.missing_eos_penalty
        return rewards

    def _judge_pairs(self, prompts: list, completions: list) -> tuple[list[str], list[list[str]]]:
        """What TRL 1.0 hands the judge: the prompts and `[first, second]` completion texts per prompt, chat rendered
        with `SIMPLE_CHAT_TEMPLATE`; XPO and Nash-MD (`_judge_strips`) strip each decoded completion first."""
        if self._judge_strips:
            completions = [[{**m, "content": m["content"].strip()} for m in c] if isinstance(c, list) else c.strip()
                           for c in completions]
        if _data.is_conversational({"prompt": prompts[0]}):
            prompts = [render_for_judge(p) for p in prompts]
            completions = [render_for_judge(c) for c in completions]
        n = len(prompts)
        return prompts, [[a, b] for a, b in zip(completions[:n], completions[n:], strict=True)]

    def _judge(self, prompts: list, completions: list) -> dict[str, torch.Tensor]:
        """The judge's verdict as batch entries: `first_better` `[n]` bool, the judge prefers the first completion of
        prompt i (its answer is 0), as TRL 1.0 reads it (Nash-MD adds the judge's probabilities)."""
        ranks = self.judge.judge(*self._judge_pairs(prompts, completions))
        return {"first_better": torch.tensor([rank == 0 for rank in ranks], device=self.accelerator.device)}

    # ------------------------------------------------------------------------------------------------------ loss
    def compute_loss(self, model: Any, inputs: dict[str, Any], return_outputs: bool = False,
                     num_items_in_batch: Any = None) -> torch.Tensor:
        mode, beta = self._mode, self.beta
        input_ids, attention_mask, keep = self._truncated_inputs(inputs)
        logps = self._completion_stats(model, input_ids, attention_mask, keep, temperature=1.0)["logp"]
        mask = inputs["completion_mask"].float()
        order = torch.cat([inputs["chosen_idx"], inputs["rejected_idx"]])
        seq = (logps * mask).sum(1)
        ref_seq = (inputs["ref_logps"] * mask).sum(1)
        # sequence-level log-probs as a one-"token" sequence: TRL's Online DPO IPO is not length-normalised
        ones = torch.ones(order.numel(), 1, device=seq.device)
        loss, metrics = dpo_loss(seq[order].unsqueeze(1), ones, ref_seq[order].unsqueeze(1), beta=beta,
                                 loss_type=self.args.loss_type)
        with torch.no_grad():
            kl = ((logps - inputs["ref_logps"]) * mask).sum(1)
            non_score = -beta * kl
            chosen_seq, rejected_seq = seq[inputs["chosen_idx"]], seq[inputs["rejected_idx"]]
            m = self._metrics[mode]
            rewards = inputs.get("rewards")  # None when a judge ranked the completions: no scores to log
            if rewards is not None:
                m["objective/scores_margin"].append(self._gathered_mean(
                    (rewards[inputs["chosen_idx"]] - rewards[inputs["rejected_idx"]]).mean()))
                m["objective/scores"].append(self._gathered_mean(rewards.mean()))
                m["objective/rlhf_reward"].append(self._gathered_mean(rewards + non_score))
            m["val/contain_eos_token"].append(inputs["contain_eos"].float().mean().item())
            m["logps/chosen"].append(self._gathered_mean(chosen_seq))
            m["logps/rejected"].append(self._gathered_mean(rejected_seq))
            m["objective/kl"].append(self._gathered_mean(kl.mean()))
            m["objective/non_score_reward"].append(self._gathered_mean(non_score.mean()))
            m["objective/entropy"].append(self._gathered_mean(-(logps * mask).sum(1).mean()))
            for name in ("rewards/chosen", "rewards/rejected", "rewards/accuracies", "rewards/margins"):
                m[name].append(self._gathered_mean(metrics[name]))
            m["beta"].append(beta)
        return loss

    def prediction_step(self, model: Any, inputs: Any, prediction_loss_only: bool,
                        ignore_keys: list[str] | None = None) -> tuple:
        inputs = self._prepare_inputs(inputs)
        with torch.no_grad(), self.compute_loss_context_manager():
            loss = self.compute_loss(model, inputs)
        return loss.detach(), None, None
