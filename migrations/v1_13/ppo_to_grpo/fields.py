"""Data: the PPOConfig -> GRPOConfig / OnlineDPOConfig field mapping (research notes trl_api.md section 3).

Pure data plus one pure function, `map_config`, that maps a list of `(field, value-node)` entries to the target
config's entries and the notes/TODOs that go with them. The CST plumbing lives in the other modules of this package (`config_call` applies this table).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import libcst as cst

from migrations.kinds.cst import code, literal_value

Era = Literal["classic", "trainer"]
Target = Literal["grpo", "online-dpo"]

# ---- defaults of the old configs (written out explicitly: GRPO/ODPO defaults differ) ----
CLASSIC_DEFAULTS = {
    "learning_rate": 1.41e-5,
    "init_kl_coef": 0.2,
    "ppo_epochs": 4,
    "batch_size": 128,
    "mini_batch_size": 128,
    "gradient_accumulation_steps": 1,
    "cliprange": 0.2,
}
TRAINER_DEFAULTS = {
    "kl_coef": 0.05,
    "num_ppo_epochs": 4,
    "response_length": 53,
    "temperature": 0.7,
    "per_device_train_batch_size": 8,
    "gradient_accumulation_steps": 1,
    "num_mini_batches": 1,
    "cliprange": 0.2,
}
# learning_rate default of the trainer-style PPOConfig: TrainingArguments' 5e-5 up to v0.28, 3e-6 from v0.29
# (only `trl.experimental.ppo` existed by then).
TRAINER_LR_TOP_LEVEL = 5e-5
TRAINER_LR_EXPERIMENTAL = 3e-6

# ---- classic era (v0.2 - v0.11) ----
CLASSIC_ONLY = frozenset(
    {
        "model_name", "query_dataset", "reward_model", "log_with", "tracker_kwargs", "accelerator_kwargs",
        "project_kwargs", "tracker_project_name", "push_to_hub_if_best_kwargs", "steps", "adap_kl_ctrl",
        "init_kl_coef", "kl_penalty", "target", "horizon", "forward_batch_size", "mini_batch_size", "ppo_epochs",
        "optimize_cuda_cache", "optimize_device_cache", "early_stopping", "target_kl", "compare_steps",
        "ratio_threshold", "use_score_scaling", "use_score_norm", "score_clip", "task_name", "backward_batch_size",
        "global_backward_batch_size", "global_batch_size", "is_encoder_decoder", "is_peft_model",
    }
)
CLASSIC_DROPPED = {
    # field: why (shown in the TODO)
    "model_name": "tracking only; the model is the trainer's `model`",
    "query_dataset": "tracking only",
    "reward_model": "tracking only; the reward is `reward_funcs`",
    "task_name": "tracking only",
    "tracker_project_name": "set WANDB_PROJECT / run_name instead",
    "tracker_kwargs": "no successor (tracker init kwargs)",
    "accelerator_kwargs": "no successor (TrainingArguments configure accelerate)",
    "project_kwargs": "no successor (logging_dir is not a TrainingArguments field in transformers 5)",
    "push_to_hub_if_best_kwargs": "use push_to_hub/hub_model_id (+ load_best_model_at_end)",
    "compare_steps": "no successor",
    "steps": "classic: samples; see _map_steps (max_steps)",
    "adap_kl_ctrl": "adaptive KL control has no successor (beta is fixed)",
    "target": "adaptive KL target; no successor",
    "horizon": "adaptive KL horizon; no successor",
    "kl_penalty": "KL estimator; GRPO uses k3 in the loss",
    "gamma": "no critic / GAE",
    "lam": "no critic / GAE",
    "cliprange_value": "no value head",
    "vf_coef": "no value head",
    "early_stopping": "no successor",
    "target_kl": "no successor",
    "ratio_threshold": "no successor (GRPO `delta` is a different two-sided clip)",
    "use_score_scaling": "GRPO normalises rewards per group (`scale_rewards`)",
    "use_score_norm": "GRPO normalises rewards per group (`scale_rewards`)",
    "score_clip": "clip inside the reward function",
    "whiten_rewards": "GRPO normalises rewards per group",
    "optimize_cuda_cache": "closest: torch_empty_cache_steps",
    "optimize_device_cache": "closest: torch_empty_cache_steps",
    "world_size": "computed",
    "backward_batch_size": "computed",
    "global_backward_batch_size": "computed",
    "global_batch_size": "computed",
    "is_encoder_decoder": "computed",
    "is_peft_model": "computed",
    "dataset_num_proc": "GRPO does no up-front tokenisation",
    "forward_batch_size": "deprecated alias of mini_batch_size",
}

# ---- trainer-style era (PPOv2Config v0.9.3 ... trl.experimental.ppo.PPOConfig 1.12) ----
TRAINER_ONLY = frozenset(
    {
        "num_mini_batches", "total_episodes", "local_rollout_forward_batch_size", "num_sample_generations",
        "response_length", "stop_token", "stop_token_id", "missing_eos_penalty", "sft_model_path",
        "reward_model_path", "num_total_batches", "micro_batch_size", "local_batch_size", "local_mini_batch_size",
        "model_adapter_name", "ref_adapter_name", "num_ppo_epochs", "kl_coef", "kl_estimator",
        "penalty_reward_value", "non_eos_penalty", "sanity_check", "base_model", "num_updates", "output_dir",
        "per_device_train_batch_size", "num_train_epochs", "max_steps", "logging_steps", "bf16", "run_name",
        "eval_strategy", "evaluation_strategy", "save_strategy", "report_to",
    }
)
TRAINER_DROPPED = {
    "dataset_num_proc": "GRPO does no up-front tokenisation",
    "local_rollout_forward_batch_size": "a memory knob of PPO's rollout; no successor",
    "num_sample_generations": "closest: log_completions=True",
    "stop_token": "GRPO/Online DPO always stop at the tokenizer EOS",
    "world_size": "computed",
    "num_total_batches": "computed",
    "micro_batch_size": "computed",
    "local_batch_size": "computed",
    "batch_size": "computed",
    "local_mini_batch_size": "computed",
    "mini_batch_size": "computed",
    "model_adapter_name": "PEFT reference = disabled adapter",
    "ref_adapter_name": "PEFT reference = disabled adapter",
    "whiten_rewards": "GRPO normalises rewards per group",
    "kl_estimator": "GRPO uses k3 in the loss",
    "vf_coef": "no value model",
    "cliprange_value": "no value model",
    "gamma": "no critic / GAE",
    "lam": "no critic / GAE",
    "penalty_reward_value": "emulate inside the reward function",
    "non_eos_penalty": "emulate inside the reward function",
    "sanity_check": "no successor",
    "base_model": "no successor",
    "num_updates": "computed",
    "total_episodes": "no field; training length is num_train_epochs / max_steps",
    "sft_model_path": "the trainer's `model` argument",
    "reward_model_path": "the trainer's `reward_funcs` argument",
}

PPO_ONLY_FIELDS = CLASSIC_ONLY | set(CLASSIC_DROPPED) | set(TRAINER_DROPPED) | {
    "cliprange", "kl_coef", "num_ppo_epochs", "response_length", "init_kl_coef", "ppo_epochs",
    "missing_eos_penalty", "num_mini_batches", "stop_token_id", "log_with", "exp_name", "mini_batch_size",
}


# The value type of PPO config fields whose default is None (trl 0.11.4 `trainer/ppo_config.py` and
# `trainer/utils.py` OnPolicyConfig: `Optional[<type>]`), for fields a script's own dataclass takes over.
NONE_DEFAULT_TYPES: dict[str, str] = {
    "task_name": "str", "forward_batch_size": "int", "max_grad_norm": "float", "optimize_cuda_cache": "bool",
    "score_clip": "float", "dataset_num_proc": "int", "total_episodes": "int", "stop_token": "str",
    "stop_token_id": "int", "missing_eos_penalty": "float", "model_adapter_name": "str", "ref_adapter_name": "str",
    "run_name": "str",
}


def renamed_field(name: str, era: Era, target: Target) -> str | None:
    """The successor field of a PPO config attribute (for `config.<field>` reads), None if it has none."""
    common = {"exp_name": "run_name", "cliprange": "epsilon" if target == "grpo" else None}
    if era == "classic":
        table = {
            **common,
            "ppo_epochs": "num_iterations" if target == "grpo" else None,
            "init_kl_coef": "beta" if target == "grpo" else None,
            "log_with": "report_to",
            "mini_batch_size": "per_device_train_batch_size",
        }
    else:
        table = {
            **common,
            "num_ppo_epochs": "num_iterations" if target == "grpo" else None,
            "kl_coef": "beta" if target == "grpo" else None,  # ODPO's beta is the DPO temperature
            "response_length": "max_completion_length" if target == "grpo" else "max_new_tokens",
            "missing_eos_penalty": "missing_eos_penalty" if target == "online-dpo" else None,
            "reward_model_path": "reward_model_path" if target == "online-dpo" else None,  # an (unused) ODPO field
        }
    return table.get(name, name if name not in PPO_ONLY_FIELDS else None)


@dataclass
class ConfigMapping:
    """The result of mapping one config's entries."""

    entries: list[tuple[str, cst.BaseExpression]] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # "name=value (why)"
    todos: list[tuple[str, str]] = field(default_factory=list)  # (message, anchor)
    notes: list[str] = field(default_factory=list)
    values: dict[str, cst.BaseExpression] = field(default_factory=dict)  # the original entries, by name


def _none_means_none(node: cst.BaseExpression) -> cst.BaseExpression:
    """`log_with=args.log_with` (default None: no tracker) -> `report_to=args.log_with or "none"`: TrainingArguments
    read `report_to=None` as every installed integration on transformers 4.x ("all") and keep `[None]` on 5.x; PPO's
    `log_with` None (or an empty value) meant no tracker, which is `"none"`. The expression is evaluated once."""
    atom = isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.SimpleString))
    left = node if atom or node.lpar else node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.BooleanOperation(left=left, operator=cst.Or(), right=cst.SimpleString('"none"'))


def _num(v: object) -> cst.BaseExpression:
    return py_literal(v)


def py_literal(v: object) -> cst.BaseExpression:
    """A literal expression for a Python value, strings in double quotes."""
    if isinstance(v, str):
        return cst.SimpleString('"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"')
    if isinstance(v, float):
        text = repr(v)
        if "e-0" in text:
            text = text.replace("e-0", "e-")
        return cst.Float(text)
    return cst.parse_expression(repr(v))


def pick_num_generations(generation_batch: int) -> int | None:
    """The group size for a generation batch: the largest divisor in [2, 8] (GRPO's default group is 8) that still
    leaves at least 2 prompts per batch when the batch allows it; None if no divisor >= 2 exists."""
    divisors = [g for g in range(8, 1, -1) if generation_batch % g == 0]
    for g in divisors:
        if generation_batch // g >= 2:
            return g
    if divisors:
        return divisors[0]
    if generation_batch >= 2:
        return generation_batch
    return None


def map_config(
    entries: list[tuple[str, cst.BaseExpression]],
    *,
    era: Era,
    target: Target,
    experimental: bool = False,
    static: bool = True,
    extra: dict[str, cst.BaseExpression] | None = None,
    own_fields: frozenset[str] = frozenset(),
    old_defaults: dict[str, object] | None = None,
) -> ConfigMapping:
    """Map PPO config entries to the target config.

    `static=False` when the entries are not the whole config (a `**kwargs` spread, a parser): defaults are then not
    written out and the batch constraint is flagged instead of solved. `extra` are target entries found elsewhere (the
    step loop's generation kwargs, the number of epochs). `own_fields` are fields a user subclass declares itself
    (never renamed). `old_defaults`: the PPO config defaults of the releases the file could run on (from the atlas,
    `defaults.field_default`: a value, or `Unknown` where they differ); `CLASSIC_DEFAULTS` / the trainer-style
    learning rate of the file's import path where absent.
    """
    out = ConfigMapping()
    grpo = target == "grpo"
    if era == "classic":
        fallback: dict[str, object] = CLASSIC_DEFAULTS
    else:
        fallback = {"learning_rate": TRAINER_LR_EXPERIMENTAL if experimental else TRAINER_LR_TOP_LEVEL}
    old_default = _old_defaults(old_defaults or {}, fallback, entries, out)
    given = {k: v for k, v in entries}
    out.values = dict(given)
    extra = dict(extra or {})
    new: dict[str, cst.BaseExpression] = {}
    kl_anchor = "ppo-kl-beta"

    def lit(name: str, default: object = None) -> object:
        node = given.get(name)
        if node is None:
            return default
        return literal_value(node, _DYNAMIC)

    def drop(name: str, why: str) -> None:
        node = given[name]
        out.dropped.append(f"{name}={code(node)} ({why})")

    for name, node in entries:
        if name in own_fields:
            new[name] = node
            continue
        if era == "classic":
            if name == "exp_name":
                new["run_name"] = node
            elif name == "log_with":
                v = literal_value(node, _DYNAMIC)
                new["report_to"] = _num("none") if v is None else _none_means_none(node) if v is _DYNAMIC else node
            elif name == "cliprange":
                if grpo:
                    new["epsilon"] = node
                else:
                    drop(name, "Online DPO has no ratio clipping")
            elif name == "ppo_epochs":
                if grpo:
                    new["num_iterations"] = node
                else:
                    drop(name, "Online DPO has no PPO epochs")
            elif name == "init_kl_coef":
                if grpo:
                    new["beta"] = node
                else:
                    drop(name, "Online DPO's beta is the DPO temperature, not a KL penalty")
            elif name == "max_grad_norm":
                v = literal_value(node, _DYNAMIC)
                new["max_grad_norm"] = _num(0.0) if v is None else node
            elif name in ("mini_batch_size", "forward_batch_size", "batch_size", "gradient_accumulation_steps", "steps"):
                continue  # batch arithmetic below (and `_map_steps`)
            elif name in CLASSIC_DROPPED or name in ("gamma", "lam", "vf_coef", "cliprange_value", "whiten_rewards"):
                drop(name, CLASSIC_DROPPED.get(name, "no successor"))
            else:
                new[name] = node
        else:
            if name == "exp_name":
                if "run_name" in given:
                    drop(name, "run_name is set")
                else:
                    new["run_name"] = node
            elif name == "cliprange":
                if grpo:
                    new["epsilon"] = node
                else:
                    drop(name, "Online DPO has no ratio clipping")
            elif name == "num_ppo_epochs":
                if grpo:
                    new["num_iterations"] = node
                else:
                    drop(name, "Online DPO has no PPO epochs")
            elif name == "kl_coef":
                if grpo:
                    new["beta"] = node
                else:
                    drop(name, "Online DPO's beta is the DPO temperature, not a KL penalty")
            elif name == "response_length":
                new["max_completion_length" if grpo else "max_new_tokens"] = node
            elif name == "missing_eos_penalty":
                if grpo:
                    drop(name, "GRPO has no such field: subtract it inside the reward function (`completion_ids`)")
                    out.todos.append(
                        (
                            f"missing_eos_penalty={code(node)} has no GRPO field: subtract it inside the reward "
                            "function for completions without EOS (reward functions receive `completion_ids`)",
                            "ppo-config-fields",
                        )
                    )
                else:
                    new[name] = node
            elif name == "stop_token_id":
                new["generation_kwargs"] = cst.parse_expression(f'{{"eos_token_id": {code(node)}}}')
                out.todos.append(
                    (
                        f"stop_token_id={code(node)} became generation_kwargs eos_token_id: TRL 1.13/1.14 still mask "
                        "completions at the tokenizer EOS only (1.15+ also honour model.generation_config.eos_token_id)",
                        "ppo-config-fields",
                    )
                )
            elif name == "num_mini_batches":
                continue  # batch arithmetic below
            elif name == "reward_model_path" and not grpo:
                new[name] = node
            elif name in TRAINER_DROPPED:
                drop(name, TRAINER_DROPPED[name])
            else:
                new[name] = node

    # ---- defaults that differ: the old value, written out ----
    if static:
        if era == "classic":
            new.setdefault("learning_rate", _num(old_default("learning_rate")))
            new.setdefault("seed", _num(0))
            if grpo:
                new.setdefault("num_iterations", _num(CLASSIC_DEFAULTS["ppo_epochs"]))
                new.setdefault("beta", _num(CLASSIC_DEFAULTS["init_kl_coef"]))
            new.setdefault("report_to", _num("none"))
            new.setdefault("max_grad_norm", _num(0.0))
            new.setdefault("gradient_checkpointing", cst.Name("False"))
            mixed = None
            acc = given.get("accelerator_kwargs")
            if acc is not None:
                acc_val = literal_value(acc, None)
                if isinstance(acc_val, dict):
                    mixed = acc_val.get("mixed_precision")
            if mixed in ("bf16", "fp16"):
                new.setdefault(mixed, cst.Name("True"))
            if "bf16" not in new and "fp16" not in new:
                new["bf16"] = cst.Name("False")  # classic PPO trained in fp32 unless accelerate was told otherwise
        else:
            new.setdefault("learning_rate", _num(old_default("learning_rate")))
            new.setdefault("temperature", _num(TRAINER_DEFAULTS["temperature"]))
            new.setdefault(
                "max_completion_length" if grpo else "max_new_tokens", _num(TRAINER_DEFAULTS["response_length"])
            )
            if grpo:
                new.setdefault("num_iterations", _num(TRAINER_DEFAULTS["num_ppo_epochs"]))
                new.setdefault("beta", _num(TRAINER_DEFAULTS["kl_coef"]))

    # ---- KL coefficient semantics ----
    if grpo and "beta" in new and ("kl_coef" in given or "init_kl_coef" in given or static):
        old = "init_kl_coef" if era == "classic" else "kl_coef"
        out.todos.append(
            (
                f"beta={code(new['beta'])} carries PPO's {old}, but PPO subtracted kl_coef*KL from the reward per "
                "token (classic: adaptive controller) while GRPO adds beta*KL(k3) to the loss; with beta != 0 and no "
                "PEFT, GRPO reloads the reference model from model.config._name_or_path (no ref_model argument). "
                "Tune beta (GRPO default 0.0 = no reference model)",
                kl_anchor,
            )
        )
    if not grpo and ("kl_coef" in given or "init_kl_coef" in given):
        out.todos.append(
            (
                "Online DPO's beta is the DPO inverse temperature (default 0.1), not PPO's KL coefficient: the old "
                "value was not carried over",
                kl_anchor,
            )
        )

    # ---- extra entries from the step loop ----
    for k, v in extra.items():
        if grpo or k not in ("max_completion_length",):
            key = k if grpo or k != "max_completion_length" else "max_new_tokens"
            new.setdefault(key, v)
        else:
            new.setdefault("max_new_tokens", v)

    # ---- batch arithmetic ----
    _map_batches(era, grpo, given, lit, new, out, static, old_default)
    if era == "classic" and "steps" in given:
        if "num_train_epochs" in extra:  # the converted step loop set the length; the trainer never read `steps`
            out.dropped.append(f"steps={code(given['steps'])} (classic: samples, not read by the trainer; the step "
                               "loop's length became num_train_epochs)")
        else:
            _map_steps(grpo, given, lit, new, out, old_default)

    if out.dropped:
        what = "; ".join(out.dropped)
        out.todos.insert(0, (f"PPO config fields with no {'GRPO' if grpo else 'Online DPO'} successor were removed: {what}",
                             "ppo-config-fields"))
    out.entries = list(new.items())
    return out


_DYNAMIC = object()


def _old_defaults(old_defaults: dict[str, object], fallback: dict[str, object], entries,  # type: ignore[no-untyped-def]
                  out: ConfigMapping):
    """`default(name)`: the old config's default of a field the call does not set, `_DYNAMIC` where the releases the
    file could run on disagree (then marked once, with the values per release). Known values come from
    `old_defaults`, else `fallback` (the era's newest defaults)."""
    given = {k for k, _ in entries}
    marked: set[str] = set()

    def default(name: str) -> object:
        value = old_defaults.get(name, fallback.get(name))
        if type(value).__name__ != "Unknown":
            return value
        if name == "learning_rate":  # a learning rate is needed: the era's newest default, marked
            value = fallback[name]
        else:
            value = _DYNAMIC
        if name not in given and name not in marked:
            marked.add(name)
            why = old_defaults[name].why  # type: ignore[union-attr]
            if value is _DYNAMIC:
                out.todos.append((f"{name} was not set: {why}", "ppo-config-fields"))
            else:
                out.todos.append((f"{name}={value!r} written, old default uncertain (pin trl); {why}",
                                  "ppo-config-fields"))
        return value

    return default


def _map_steps(grpo, given, lit, new, out, default) -> None:
    """Classic `steps=N`: N samples (`total_ppo_epochs` = ceil(N / batch_size) PPO steps) -> `max_steps`.

    The classic trainer never read `steps`; loops did, through `total_ppo_epochs`. GRPO counts optimizer steps: one
    generation batch (the old PPO batch) gives steps_per_generation * num_iterations / gradient_accumulation_steps
    of them (`GRPOTrainer`'s `generate_every`), so the same number of generation batches is
    `max_steps = ceil(N / batch_size) * steps_per_generation * num_iterations // gradient_accumulation_steps`.
    Written out when every term is a literal; otherwise listed as removed with that formula. Not used where the
    file's converted step loop gave the length (`num_train_epochs` from the loop).
    """
    steps, b, ga = lit("steps"), lit("batch_size", default("batch_size")), lit("gradient_accumulation_steps", 1)
    nums = {k: literal_value(new[k], _DYNAMIC) if k in new else None
            for k in ("steps_per_generation", "num_iterations", "per_device_train_batch_size")}
    spg = nums["steps_per_generation"] if nums["steps_per_generation"] is not None else ga
    iters = nums["num_iterations"] if grpo else 1
    terms = (steps, b, ga, spg, iters)
    if "max_steps" in given or not all(isinstance(t, int) and not isinstance(t, bool) and t > 0 for t in terms):
        out.dropped.append(f"steps={code(given['steps'])} (classic: samples; set max_steps = ceil(steps / batch_size)"
                           " * steps_per_generation * num_iterations // gradient_accumulation_steps)")
        return
    ppo_steps = -(-steps // b)
    max_steps = max(1, ppo_steps * spg * iters // ga)
    new["max_steps"] = cst.Integer(str(max_steps))
    out.todos.append((f"steps={steps} (classic: samples, {ppo_steps} PPO steps of {b}) -> max_steps={max_steps} "
                      f"optimizer steps ({spg * iters // ga or 1} per generation batch); max_steps overrides "
                      "num_train_epochs", "ppo-config-fields"))


def _map_batches(era, grpo, given, lit, new, out, static, default) -> None:  # noqa: ANN001 - internal
    batch_anchor = "ppo-batch-size"
    if era == "classic":
        b = lit("batch_size", None)
        if b is None:
            b = default("batch_size")
        m = lit("mini_batch_size", None)
        if m is None:
            m = lit("forward_batch_size", None)
        if m is None:
            m = default("mini_batch_size")
        ga = lit("gradient_accumulation_steps", 1)
        if "gradient_accumulation_steps" in given:
            new["gradient_accumulation_steps"] = given["gradient_accumulation_steps"]
        m_node = given.get("mini_batch_size", given.get("forward_batch_size"))
        if any(x is _DYNAMIC for x in (b, m, ga)):
            if m_node is not None:
                new["per_device_train_batch_size"] = m_node
            out.todos.append(
                (
                    f"PPO batch_size={code(given['batch_size']) if 'batch_size' in given else b if b is not _DYNAMIC else '(default)'} prompts per step "
                    "(one response each) is not static: GRPO needs num_generations >= 2 completions per prompt and "
                    "num_generations must divide per_device_train_batch_size * num_processes * steps_per_generation; "
                    "set num_generations / steps_per_generation",
                    batch_anchor,
                )
            )
            return
        if not static and "batch_size" not in given and "mini_batch_size" not in given:
            out.todos.append(
                (
                    "the batch sizes are not visible here: GRPO needs num_generations >= 2 dividing "
                    "per_device_train_batch_size * num_processes * steps_per_generation",
                    batch_anchor,
                )
            )
            return
        new["per_device_train_batch_size"] = m_node if m_node is not None else cst.Integer(str(m))
        spg = b // m if (m and b % m == 0) else ga
        if grpo:
            gen = m * spg
            g = pick_num_generations(gen)
            if g is None:  # a single completion per generation batch: double it
                spg *= 2
                gen = m * spg
                g = 2
            if spg != ga:
                new["steps_per_generation"] = cst.Integer(str(spg))
            new.setdefault("num_generations", cst.Integer(str(g)))
            out.notes.append(
                f"batch: PPO batch_size={b}, mini_batch_size={m} -> per_device_train_batch_size={m}, "
                f"steps_per_generation={spg}, num_generations={g} ({gen // g} prompts x {g} completions per generation)"
            )
            if gen // g != b or gen != b:  # fewer prompts per step, or a batch doubled to hold 2 completions
                out.todos.append(
                    (
                        f"PPO scored {b} prompts x 1 response per step; GRPO now samples {gen // g} prompt(s) x "
                        f"{g} completions per generation batch of {gen} (num_generations must divide it). Adjust "
                        "num_generations / steps_per_generation if you want more prompts per step",
                        batch_anchor,
                    )
                )
        else:
            if b != m * ga:
                new["gradient_accumulation_steps"] = cst.Integer(str(max(1, b // m)))
        return
    # trainer era
    pd = lit("per_device_train_batch_size", TRAINER_DEFAULTS["per_device_train_batch_size"])
    ga = lit("gradient_accumulation_steps", 1)
    nmb = lit("num_mini_batches", 1)
    if not grpo:
        if "num_mini_batches" in given:
            out.dropped.append(f"num_mini_batches={code(given['num_mini_batches'])} (Online DPO has no minibatching)")
        return
    if any(x is _DYNAMIC for x in (pd, ga, nmb)) or not static:
        if "num_mini_batches" in given:
            out.dropped.append(f"num_mini_batches={code(given['num_mini_batches'])} (closest: steps_per_generation)")
        out.todos.append(
            (
                "GRPO needs num_generations >= 2 completions per prompt and num_generations must divide "
                "per_device_train_batch_size * num_processes * steps_per_generation; the batch sizes are not static "
                "here, so set num_generations explicitly",
                batch_anchor,
            )
        )
        return
    spg = ga * nmb
    gen = pd * spg
    g = pick_num_generations(gen)
    if g is None:
        spg *= 2
        gen = pd * spg
        g = 2
    if spg != ga:
        new["steps_per_generation"] = cst.Integer(str(spg))
    new.setdefault("num_generations", cst.Integer(str(g)))
    if any(k in given for k in ("eval_strategy", "evaluation_strategy")):
        new.setdefault("num_generations_eval", cst.Integer(str(g)))
        out.todos.append(
            (
                f"evaluation is on: per_device_eval_batch_size * num_processes must be divisible by {g}",
                batch_anchor,
            )
        )
    out.notes.append(f"batch: generation batch {gen} = {gen // g} prompts x {g} completions")
