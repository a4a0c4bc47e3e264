"""TRL 1.15 removed `trl.experimental.minillm` (#7329): MiniLLM -> `trl.DistillationTrainer` where it covers.

`DistillationTrainer` (stable since 1.10) samples completions from the student on-policy and minimises a generalised
JSD to the teacher; its default `beta=1.0` is the reverse KL that MiniLLM optimises. What it lacks is MiniLLM's
policy-gradient machinery on top of GRPO (`rkl_advantage`, `single_step_decomposition`, `length_normalization`,
`gamma`, `kd_temperature`, reward functions, every GRPO-only option). So the rule rewrites:

* `MiniLLMConfig(...)` -> `DistillationConfig(...)` when every keyword is one both configs share with the same meaning
  (the TrainingArguments fields, generation and vLLM options, `teacher_model_init_kwargs`, ...);
* `MiniLLMTrainer(...)` -> `DistillationTrainer(...)` when it is called with model/teacher positionally at most and no
  `reward_funcs`, `reward_processing_classes` or `rollout_func`;

and otherwise leaves the code with a TODO naming the option that has no counterpart. The lists were computed from the
1.14 and 1.16 wheels (fields of GRPOConfig and MiniLLMConfig that DistillationConfig does not have, plus `beta`, which
is a KL coefficient in GRPO and the JSD interpolation in distillation).
"""

from __future__ import annotations

import libcst as cst

from migrations.kinds.symbols import Moved, SymbolMigration

_MOD = "trl.experimental.minillm"

NO_COUNTERPART = frozenset({
    "beta", "cast_lm_head_to_fp32", "delta", "entropy_coef", "entropy_coef_delta", "entropy_coef_max",
    "entropy_coef_min", "entropy_target", "epsilon", "epsilon_high", "gamma", "generation_batch_size",
    "importance_sampling_level", "kd_temperature", "length_normalization", "log_completions_hub_repo",
    "log_multimodal", "loss_type", "mask_truncated_completions", "multi_objective_aggregation", "num_generations",
    "num_generations_eval", "num_iterations", "off_policy_mask_threshold", "ref_model_mixup_alpha",
    "ref_model_sync_steps", "reward_weights", "rkl_advantage", "router_aux_loss_coef", "sapo_temperature_neg",
    "sapo_temperature_pos", "scale_rewards", "single_step_decomposition", "steps_per_generation", "sync_ref_model",
    "top_entropy_quantile", "transformers_continuous_batching_config", "use_adaptive_entropy",
    "use_bias_correction_kl", "use_transformers_continuous_batching", "use_transformers_paged", "vespo_k_neg",
    "vespo_k_pos", "vespo_lambda_neg", "vespo_lambda_pos", "vllm_importance_sampling_cap",
    "vllm_importance_sampling_clip_max", "vllm_importance_sampling_clip_min", "vllm_importance_sampling_correction",
    "vllm_importance_sampling_mode",
})
TRAINER_KWARGS = frozenset({
    "model", "teacher_model", "args", "train_dataset", "eval_dataset", "processing_class", "callbacks", "optimizers",
    "peft_config",
})


class MiniLLM(SymbolMigration):
    summary = "trl.experimental.minillm (removed in 1.15) -> trl.DistillationTrainer/DistillationConfig where it covers"
    triggers = ("minillm",)
    removed_modules = {_MOD: "trl.experimental.minillm was removed in TRL 1.15; see the guide for DistillationTrainer"}
    symbols = {
        f"{_MOD}.MiniLLMConfig": Moved("trl", "DistillationConfig", "reverse KL (beta=1.0) on student samples"),
        f"{_MOD}.MiniLLMTrainer": Moved("trl", "DistillationTrainer", "reverse KL (beta=1.0) on student samples"),
    }
    conditional = frozenset(symbols)

    def convertible(self, qname: str, call: cst.Call | None) -> str | None:
        name = qname.rsplit(".", 1)[-1]
        prefix = f"{name} has no exact DistillationTrainer counterpart here"
        if call is None:
            return f"{prefix} (used other than as a call)"
        for i, arg in enumerate(call.args):
            if arg.star:
                return f"{prefix} (*args/**kwargs cannot be checked)"
            key = arg.keyword.value if arg.keyword is not None else None
            if name == "MiniLLMConfig":
                if key is None and i > 0:
                    return f"{prefix} (positional arguments beyond output_dir)"
                if key in NO_COUNTERPART:
                    return f"MiniLLMConfig({key}=...) has no DistillationConfig counterpart: decide by hand"
            else:
                if key is None and i > 1:
                    return f"{prefix} (positional arguments beyond model, teacher_model)"
                if key is not None and key not in TRAINER_KWARGS:
                    return f"MiniLLMTrainer({key}=...) has no DistillationTrainer counterpart: decide by hand"
        return None


MIGRATION = MiniLLM()
