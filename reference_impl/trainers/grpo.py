"""Group Relative Policy Optimization: `GRPOTrainer` and `GRPOConfig`, drop-in for TRL 1.16's.

Per generation batch: each prompt is sampled `num_generations` times (`model.generate`, or a vLLM server), each
completion is scored by the reward functions, rewards are normalised within their group (`scale_rewards`) into
advantages, and the policy takes `num_iterations` passes of the clipped surrogate of
`reference_impl.losses.policy.grpo_loss` (every `loss_type`: grpo, dr_grpo, dapo, bnpo, cispo, sapo, luspo, vespo;
token- or sequence-level importance sampling; k3 KL to the reference when `beta != 0`). Log-probs come from the
chunked engine at the sampling temperature; the lm_head never runs in full.

Reference model (only when `beta != 0`): the PEFT policy with adapters disabled, else a frozen copy of the policy
(`create_reference_model`). TRL instead reloads the policy from `model.config._name_or_path`, which fails for an
unsaved in-memory model. Logged metrics use TRL's names: `reward`, `reward_std`, `rewards/<func>/mean|std`,
`frac_reward_zero_std`, `kl`, `entropy`, `clip_ratio/*`, `completions/*`, `num_tokens`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from reference_impl.losses.policy import GRPO_LOSS_TYPES, grpo_loss

from . import _model
from ._base import _coerce_args
from ._config import BaseConfig, option, unsupported
from ._online import RewardFunctions, _GroupedOnlineTrainer, check_generation_fields, nanstd


@dataclass
class _GroupedConfig(BaseConfig):
    """Generation and batching fields GRPO, RLOO and Distillation share (TRL 1.16 names and defaults)."""

    _min_generations: ClassVar[int] = 2  # group baselines need siblings; distillation samples one completion

    learning_rate: float = option(1e-6, "Initial AdamW learning rate.")
    remove_unused_columns: bool = option(False, "Keep every dataset column (reward functions may use them).")
    router_aux_loss_coef: float | None = unsupported(None, "MoE auxiliary loss")
    disable_dropout: bool = option(False, "Disable dropout in the model.")
    num_generations: int = option(8, "Completions sampled per prompt.")
    num_generations_eval: int | None = option(None, "Completions per prompt in evaluation (default num_generations).")
    max_completion_length: int = option(512, "Maximum generated tokens.")
    ds3_gather_for_generation: bool = option(True, "Gather ZeRO-3 weights for generation.")
    shuffle_dataset: bool = option(True, "Shuffle the prompts.")
    pad_to_multiple_of: int | str | None = option("auto", "Pad prompt/completion ids to a multiple of this.")
    generation_batch_size: int | None = option(None, "Completions per generation (global).")
    steps_per_generation: int | None = option(None, "Optimizer micro-steps per generation.")
    temperature: float = option(1.0, "Sampling temperature (also applied to the training log-probs).")
    top_p: float = option(1.0, "Nucleus sampling.")
    top_k: int = option(0, "Top-k sampling (0: off).")
    min_p: float | None = option(None, "Min-p sampling.")
    generation_kwargs: dict | None = option(None, "Extra GenerationConfig / vLLM sampling arguments.")
    chat_template_kwargs: dict | None = option(None, "Extra arguments for apply_chat_template.")
    repetition_penalty: float = option(1.0, "Repetition penalty.")
    cache_implementation: str | None = option(None, "KV cache implementation for model.generate.")
    use_vllm: bool = option(False, "Generate with a vLLM server (OpenAI-compatible API; see trainers/_vllm.py).")
    vllm_mode: str = option("colocate", "Only 'server' is supported here.")
    vllm_model_impl: str = unsupported("vllm", "colocated vLLM")
    vllm_enable_sleep_mode: bool = unsupported(False, "colocated vLLM")
    vllm_structured_outputs_regex: str | None = unsupported(None, "structured outputs")
    vllm_server_base_url: str | None = option(None, "Base URL of the vLLM server.")
    vllm_server_host: str = option("0.0.0.0", "Host of the vLLM server.")
    vllm_server_port: int = option(8000, "Port of the vLLM server.")
    vllm_server_timeout: float = option(240.0, "Seconds to wait for the vLLM server.")
    vllm_group_port: int = unsupported(51216, "NCCL weight sync of `trl vllm-serve`")
    vllm_gpu_memory_utilization: float = unsupported(0.3, "colocated vLLM")
    vllm_max_model_length: int | None = unsupported(None, "colocated vLLM")
    vllm_tensor_parallel_size: int = unsupported(1, "colocated vLLM")
    num_iterations: int = option(1, "Optimisation passes per generation batch (mu).")
    epsilon: float = option(0.2, "Lower clip range.")
    epsilon_high: float | None = option(None, "Upper clip range (default: epsilon).")
    reward_weights: list[float] | None = option(None, "Weight of each reward function.")
    mask_truncated_completions: bool = option(False, "Exclude completions without EOS from the loss.")
    sync_ref_model: bool = unsupported(False, "TR-DPO reference syncing")
    ref_model_mixup_alpha: float = unsupported(0.6, "TR-DPO reference syncing")
    ref_model_sync_steps: int = unsupported(512, "TR-DPO reference syncing")
    log_completions: bool = unsupported(False, "completion tables")
    log_multimodal: bool = option(True, "Ignored: no multimodal support.")
    num_completions_to_print: int | None = unsupported(None, "completion tables")
    log_unique_prompts: bool = unsupported(False, "completion tables")
    use_transformers_continuous_batching: bool = unsupported(False, "continuous batching")
    transformers_continuous_batching_config: dict | None = unsupported(None, "continuous batching")
    use_transformers_paged: bool = unsupported(False, "continuous batching")

    def __post_init__(self) -> None:
        super().__post_init__()
        check_generation_fields(self)
        if self.auto_find_batch_size:
            raise ValueError("auto_find_batch_size would break prompt groups; lower per_device_train_batch_size.")
        n = self.world_size
        if self.generation_batch_size is None and self.steps_per_generation is None:
            self.steps_per_generation = self.gradient_accumulation_steps
            self.generation_batch_size = self.per_device_train_batch_size * n * self.steps_per_generation
        elif self.generation_batch_size is not None and self.steps_per_generation is None:
            if self.generation_batch_size % (self.per_device_train_batch_size * n) != 0:
                raise ValueError(f"generation_batch_size ({self.generation_batch_size}) must be divisible by the "
                                 f"global batch size ({self.per_device_train_batch_size * n}).")
            self.steps_per_generation = self.generation_batch_size // (self.per_device_train_batch_size * n)
        elif self.generation_batch_size is None:
            self.generation_batch_size = self.per_device_train_batch_size * n * self.steps_per_generation
        else:
            raise ValueError("'generation_batch_size' and 'steps_per_generation' can not be both configured.")
        if self.generation_batch_size % self.num_generations != 0:
            raise ValueError(f"generation_batch_size ({self.generation_batch_size}) must be divisible by "
                             f"num_generations ({self.num_generations}).")
        if self.num_generations < self._min_generations:
            raise ValueError(f"{type(self).__name__} needs num_generations >= {self._min_generations}, "
                             f"got {self.num_generations}.")
        if self.num_generations_eval is None:
            self.num_generations_eval = self.num_generations


@dataclass
class GRPOConfig(_GroupedConfig):
    """TRL 1.16 `GRPOConfig` fields (entropy bonus/masking, tools, off-policy masking: not implemented here)."""

    cast_lm_head_to_fp32: bool = unsupported(False, "fp32 head cast")
    beta: float = option(0.0, "Coefficient of the k3 KL to the reference (0: no reference model).")
    delta: float | None = option(None, "Two-sided clipping bound (INTELLECT-2).")
    sapo_temperature_neg: float = option(1.05, "SAPO gate temperature, non-positive advantages.")
    sapo_temperature_pos: float = option(1.0, "SAPO gate temperature, positive advantages.")
    vespo_k_pos: float = option(2.0, "VESPO k, positive advantages.")
    vespo_lambda_pos: float = option(3.0, "VESPO lambda, positive advantages.")
    vespo_k_neg: float = option(3.0, "VESPO k, negative advantages.")
    vespo_lambda_neg: float = option(2.0, "VESPO lambda, negative advantages.")
    importance_sampling_level: str = option("token", "'token' or 'sequence' (GSPO).")
    multi_objective_aggregation: str = option("sum_then_normalize", "'sum_then_normalize' or 'normalize_then_sum'.")
    scale_rewards: str = option("group", "'group', 'batch' or 'none'.")
    loss_type: str = option("dapo", f"One of {GRPO_LOSS_TYPES}.")
    top_entropy_quantile: float = unsupported(1.0, "high-entropy token masking")
    entropy_coef: float = unsupported(0.0, "entropy bonus")
    use_adaptive_entropy: bool = unsupported(False, "entropy bonus")
    entropy_coef_min: float = unsupported(0.0, "entropy bonus")
    entropy_coef_max: float = unsupported(1.0, "entropy bonus")
    entropy_coef_delta: float = unsupported(0.005, "entropy bonus")
    entropy_target: float = unsupported(0.2, "entropy bonus")
    max_tool_calling_iterations: int | None = unsupported(None, "tool calling")
    vllm_importance_sampling_correction: bool = option(True, "Correct vLLM sampling with importance weights.")
    vllm_importance_sampling_mode: str = option("sequence_mask", "token/sequence _truncate/_mask.")
    vllm_importance_sampling_clip_max: float | None = option(3.0, "Upper bound of the IS ratio.")
    vllm_importance_sampling_clip_min: float | None = option(None, "Lower bound of the IS ratio.")
    off_policy_mask_threshold: float | None = option(None, "Off-policy sequence masking threshold (DeepSeek-V3.2).")
    use_bias_correction_kl: bool = option(True, "Multiply the KL term by the importance ratio.")
    log_completions_hub_repo: str | None = unsupported(None, "completion tables")
    vllm_importance_sampling_cap: float | None = option(None, "Deprecated alias of vllm_importance_sampling_clip_max.")

    def __post_init__(self) -> None:
        if self.scale_rewards is True:
            self.scale_rewards = "group"
        elif self.scale_rewards is False:
            self.scale_rewards = "none"
        super().__post_init__()
        if self.loss_type not in GRPO_LOSS_TYPES:
            raise ValueError(f"Unknown GRPO loss_type {self.loss_type!r}; expected one of {GRPO_LOSS_TYPES}.")
        if self.vllm_importance_sampling_cap is not None:
            self.vllm_importance_sampling_clip_max = self.vllm_importance_sampling_cap


class GRPOTrainer(_GroupedOnlineTrainer):
    """GRPO on the chunked engine. Same constructor as TRL 1.16's `GRPOTrainer` (no tools/environments)."""

    _name = "GRPO"
    _tag_names = ["grpo"]
    loss_is_scaled_for_ga = True

    def __init__(
        self,
        model: Any,
        reward_funcs: Any = None,
        args: GRPOConfig | None = None,
        train_dataset: Any = None,
        eval_dataset: Any = None,
        processing_class: Any = None,
        reward_processing_classes: Any = None,
        callbacks: list | None = None,
        optimizers: tuple = (None, None),
        quantization_config: Any = None,
        peft_config: Any = None,
        tools: list[Callable] | None = None,
        rollout_func: Callable | None = None,
        environment_factory: Any = None,
    ) -> None:
        args = _coerce_args(args, GRPOConfig, model, "GRPO")
        if tools or environment_factory is not None:
            raise ValueError("`tools` and `environment_factory` are not supported by reference_impl's GRPOTrainer.")
        if reward_funcs is None:
            raise ValueError("No reward source provided: pass `reward_funcs`.")
        if quantization_config is not None:
            args.model_init_kwargs = {**(args.model_init_kwargs or {}), "quantization_config": quantization_config}
        self._init_grouped(model, reward_funcs, args, train_dataset, eval_dataset, processing_class,
                           reward_processing_classes, callbacks, optimizers, peft_config)
        self.rollout_func = rollout_func

    # ---------------------------------------------------------------------------------------------- shared init
    def _init_grouped(self, model: Any, reward_funcs: Any, args: Any, train_dataset: Any, eval_dataset: Any,
                      processing_class: Any, reward_processing_classes: Any, callbacks: list | None,
                      optimizers: tuple, peft_config: Any) -> None:
        from transformers import set_seed

        if train_dataset is None:
            raise ValueError("`train_dataset` is required")
        if "prompt" not in (getattr(train_dataset, "column_names", None) or next(iter(train_dataset))):
            raise ValueError(f"{type(self).__name__} needs a 'prompt' column in the dataset.")
        set_seed(args.seed)
        model = self._prepare_model(model, args, peft_config)
        processing_class = self._prepare_processing_class(processing_class, model, args, padding_side="left")
        tokenizer = getattr(processing_class, "tokenizer", processing_class)
        self.reward_functions = RewardFunctions(reward_funcs, reward_processing_classes, args, args.reward_weights)
        self.reward_funcs = self.reward_functions.funcs
        self.reward_weights = self.reward_functions.weights
        self.beta = args.beta
        ref_model = None
        if self.beta != 0.0 and not _model.is_peft_model(model):
            ref_model = _model.create_reference_model(_model.causal_lm(model))
        self.num_generations = args.num_generations
        self.num_generations_eval = args.num_generations_eval
        self.num_iterations = args.num_iterations
        self.max_completion_length = args.max_completion_length
        self._step = 0
        self._buffered_inputs: list | None = None
        super().__init__(
            model=model, args=args, data_collator=lambda features: features, train_dataset=train_dataset,
            eval_dataset=eval_dataset, processing_class=processing_class, callbacks=callbacks, optimizers=optimizers,
        )
        self._setup_online(model, tokenizer, args, max_new_tokens=args.max_completion_length,
                           temperature=args.temperature, top_p=args.top_p, top_k=args.top_k, min_p=args.min_p,
                           repetition_penalty=args.repetition_penalty)
        self.ref_model = None
        if ref_model is not None:
            ref_model.requires_grad_(False)
            self.ref_model = _model.prepare_frozen_model(self.accelerator, ref_model)
        for i, func in enumerate(self.reward_functions.funcs):
            if isinstance(func, torch.nn.Module):
                self.reward_functions.funcs[i] = _model.prepare_frozen_model(self.accelerator, func)

    # ------------------------------------------------------------------------------------------- generation
    def _rollout(self, prompts: list) -> tuple[list[list[int]], list[list[int]], list[list[float]] | None]:
        if self.rollout_func is not None:
            out = self.rollout_func(prompts, self)
            missing = {"prompt_ids", "completion_ids", "logprobs"} - set(out)
            if missing:
                raise ValueError(f"rollout_func must return keys {sorted(missing)} in its output dict.")
            return out["prompt_ids"], out["completion_ids"], out["logprobs"]
        prompt_ids = self._tokenize_prompts(prompts)
        completion_ids, logprobs = self._generate_completions(prompt_ids)
        return prompt_ids, completion_ids, logprobs

    def _generate_and_score(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        args, device, mode = self.args, self.accelerator.device, self._mode
        prompts = [x["prompt"] for x in inputs]
        prompt_ids, completion_ids, sampling_logps = self._rollout(prompts)
        completions = self._decode(completion_ids, prompts)
        self._log_completion_lengths(prompt_ids, completion_ids)
        batch = self._pad_completions(prompt_ids, completion_ids)
        if sampling_logps is not None:
            from . import _data

            batch["sampling_per_token_logps"] = _data.pad_lists(
                sampling_logps, 0.0, dtype=torch.float32, pad_to_multiple_of=args.pad_to_multiple_of).to(device)
        if args.mask_truncated_completions:
            stop = [*self.eos_token_ids, self._tokenizer.pad_token_id]
            truncated = torch.tensor([not c or c[-1] not in stop for c in completion_ids], device=device)
            batch["completion_mask"] = batch["completion_mask"] * (~truncated).unsqueeze(1).long()
        batch["num_items_in_batch"] = self.accelerator.gather(batch["completion_mask"].sum()).sum()
        input_ids = torch.cat([batch["prompt_ids"], batch["completion_ids"]], dim=1)
        attention_mask = torch.cat([batch["prompt_mask"], batch["completion_mask"]], dim=1)
        keep = batch["completion_ids"].size(1)
        bs = args.per_device_train_batch_size if mode == "train" else args.per_device_eval_batch_size
        self._score_old_and_ref(batch, input_ids, attention_mask, keep, bs)
        rewards_per_func = self.reward_functions(inputs, prompts, completions, completion_ids, device,
                                                 self._reward_extra_kwargs(), self.chat_template_kwargs)
        rewards_per_func = self.accelerator.gather(rewards_per_func)
        batch["advantages"] = self._advantages(rewards_per_func, batch, len(prompts))
        self._log_rewards(rewards_per_func, self.reward_weights)
        return batch

    def _score_old_and_ref(self, batch: dict[str, Any], input_ids: torch.Tensor, attention_mask: torch.Tensor,
                           keep: int, bs: int) -> None:
        args = self.args
        use_is = self.vllm_client is not None and args.vllm_importance_sampling_correction
        with torch.no_grad(), _model.no_gradient_checkpointing(self.model, args):
            generate_every = args.steps_per_generation * self.num_iterations
            if args.gradient_accumulation_steps % generate_every != 0 or use_is:
                batch["old_per_token_logps"] = self._completion_stats(self.model, input_ids, attention_mask, keep,
                                                                      batch_size=bs)["logp"]
            if self.beta != 0.0:
                with _model.reference_context(self.model, self.ref_model) as ref:
                    batch["ref_per_token_logps"] = self._completion_stats(ref, input_ids, attention_mask, keep,
                                                                          batch_size=bs)["logp"]
        if use_is and "sampling_per_token_logps" in batch:
            batch["importance_sampling_ratio"] = self._vllm_is_ratio(batch)

    def _vllm_is_ratio(self, batch: dict[str, Any]) -> torch.Tensor:
        args, mask = self.args, batch["completion_mask"]
        diff = torch.nan_to_num((batch["old_per_token_logps"] - batch["sampling_per_token_logps"]) * mask, nan=0.0)
        if args.vllm_importance_sampling_mode.startswith("sequence"):
            diff = diff.sum(dim=-1, keepdim=True)
        ratio = torch.exp(diff)
        lo, hi = args.vllm_importance_sampling_clip_min, args.vllm_importance_sampling_clip_max
        if args.vllm_importance_sampling_mode.endswith("truncate"):
            return torch.clamp(ratio, min=lo, max=hi)
        invalid = (ratio < (lo if lo is not None else -float("inf"))) | (ratio > (hi if hi is not None else float("inf")))
        return ratio.masked_fill(invalid, 0.0)

    def _advantages(self, rewards_per_func: torch.Tensor, batch: dict[str, Any], num_local: int) -> torch.Tensor:
        """Group-normalised advantages of this process's rows (TRL's two aggregation modes)."""
        args, device = self.args, rewards_per_func.device
        g = self.num_generations if self._mode == "train" else self.num_generations_eval
        w = self.reward_weights.to(device).unsqueeze(0)
        unscorable = torch.isnan(rewards_per_func).all(dim=1)
        if args.multi_objective_aggregation == "sum_then_normalize":
            rewards = (rewards_per_func * w).nansum(dim=1)
            rewards[unscorable] = torch.nan
            mean = torch.nanmean(rewards.view(-1, g), dim=1).repeat_interleave(g)
            if args.scale_rewards in ("group", "none"):
                std = nanstd(rewards.view(-1, g), dim=1).repeat_interleave(g) if g > 1 else torch.zeros_like(rewards)
            elif args.scale_rewards == "batch":
                std = nanstd(rewards).expand_as(rewards) if rewards.numel() > 1 else torch.zeros_like(rewards)
            else:
                raise ValueError(f"Invalid scale_rewards {args.scale_rewards!r}: 'batch', 'group' or 'none'.")
            advantages = rewards - mean
            if args.scale_rewards != "none":
                advantages = advantages / (std + 1e-4)
        elif args.multi_objective_aggregation == "normalize_then_sum":
            grouped = rewards_per_func.view(-1, g, rewards_per_func.size(1))
            mean_k = torch.nanmean(grouped, dim=1, keepdim=True)
            std_k = nanstd(grouped, dim=1, keepdim=True) if g > 1 else torch.zeros_like(mean_k)
            rewards = (((grouped - mean_k) / (std_k + 1e-4)).view(-1, rewards_per_func.size(1)) * w).nansum(dim=1)
            rewards[unscorable] = torch.nan
            std = nanstd(rewards).expand_as(rewards) if rewards.numel() > 1 else torch.zeros_like(rewards)
            advantages = (rewards - torch.nanmean(rewards)) / (std + 1e-4)
        else:
            raise ValueError(f"Invalid multi_objective_aggregation {args.multi_objective_aggregation!r}.")
        self._metrics[self._mode]["frac_reward_zero_std"].append(
            torch.isclose(std, torch.zeros_like(std)).float().mean().item())
        advantages = torch.nan_to_num(advantages, nan=0.0)
        start = self.accelerator.process_index * num_local
        return advantages[start : start + num_local]

    # ------------------------------------------------------------------------------------------------------ loss
    def compute_loss(self, model: Any, inputs: dict[str, Any], return_outputs: bool = False,
                     num_items_in_batch: Any = None) -> torch.Tensor:
        if return_outputs:
            raise ValueError("The GRPOTrainer does not support returning outputs")
        args, mode = self.args, self._mode
        input_ids = torch.cat([inputs["prompt_ids"], inputs["completion_ids"]], dim=1)
        attention_mask = torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], dim=1)
        mask = inputs["completion_mask"]
        stats = self._completion_stats(model, input_ids, attention_mask, inputs["completion_ids"].size(1),
                                       outputs=("logp", "entropy"))
        loss, metrics = grpo_loss(
            stats["logp"], mask, inputs["advantages"],
            old_per_token_logps=inputs.get("old_per_token_logps"),
            ref_per_token_logps=inputs.get("ref_per_token_logps"),
            loss_type=args.loss_type, beta=self.beta, epsilon=args.epsilon, epsilon_high=args.epsilon_high,
            delta=args.delta, importance_sampling_level=args.importance_sampling_level,
            use_bias_correction_kl=args.use_bias_correction_kl,
            importance_sampling_ratio=inputs.get("importance_sampling_ratio"),
            sapo_temperature_pos=args.sapo_temperature_pos, sapo_temperature_neg=args.sapo_temperature_neg,
            vespo_k_pos=args.vespo_k_pos, vespo_lambda_pos=args.vespo_lambda_pos, vespo_k_neg=args.vespo_k_neg,
            vespo_lambda_neg=args.vespo_lambda_neg, max_completion_length=self.max_completion_length,
            num_items_in_batch=inputs["num_items_in_batch"],
            off_policy_mask_threshold=args.off_policy_mask_threshold,
            sampling_per_token_logps=inputs.get("sampling_per_token_logps"),
            entropies=stats["entropy"],
            gradient_accumulation_steps=self._accumulation_steps() if mode == "train" else 1,
            num_processes=self.accelerator.num_processes, steps_per_generation=args.steps_per_generation,
            training=mode == "train",
        )
        for name, value in metrics.items():
            if name in ("kl", "entropy") or name.endswith("_mean") or name == "cispo_clip_ratio":
                self._metrics[mode][name].append(self._gathered_mean(value))
            elif name.endswith("_min"):
                self._metrics[mode][name].append(self.accelerator.gather(value.reshape(1)).nan_to_num(1.0).min().item())
            elif name.endswith("_max"):
                self._metrics[mode][name].append(self.accelerator.gather(value.reshape(1)).nan_to_num(0.0).max().item())
            else:
                self._metrics[mode][name].append(self._gathered_mean(value))
        return loss
