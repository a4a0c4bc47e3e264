"""rloo-v1-to-rloo: the PPO-style RLOO API (TRL 0.11-0.21) -> the GRPO-shaped `RLOOTrainer` of TRL 0.22+.

TRL 0.11 added `RLOOTrainer(config=RLOOConfig, tokenizer=/processing_class=, policy=, ref_policy=, reward_model=,
train_dataset=, eval_dataset=)`, an on-policy trainer sharing PPOv2's config fields. TRL 0.22 replaced it with
`RLOOTrainer(model=, reward_funcs=, args=, train_dataset=, eval_dataset=, processing_class=, ...)`, kept the old
keywords and config fields as deprecated aliases (its `RLOOTrainer.__init__` and `RLOOConfig.__post_init__` hold the
mapping this rule follows) and removed them in 0.25 (read from the 0.21.0, 0.22.2, 0.24.0 and 1.16.0 wheels).

A file is "v1" when it calls `RLOOTrainer` with a v1 keyword (`config`, `policy`, `ref_policy`, `reward_model`) or
`RLOOConfig` with a field 1.16 lacks. In such a file, by qualified name (aliases and every import form):

* the trainer call: `config=` -> `args=`, `policy=` -> `model=`, `reward_model=` -> `reward_funcs=` (1.16 accepts a
  sequence-classification model there) plus `reward_processing_classes=<the tokenizer>` (v1 scored with the policy's
  tokenizer, v2 would load one from the reward model's name), `tokenizer=` -> `processing_class=`; `ref_policy=` / `data_collator=`
  dropped (when `beta > 0`, 1.16 loads the reference from the policy's `name_or_path`; v2 has no collator) with a marker; the datasets
  kept with a marker (v1 took `input_ids`, v2 takes a `prompt` column); a positional call is only marked;
* `RLOOConfig(...)`: the same-meaning renames (`rloo_k`, `response_length`, `cliprange`, `num_ppo_epochs`), the
  renames whose meaning changed (`kl_coef`, `normalize_reward`, `num_mini_batches`, `exp_name`) with a marker, the
  fields without successor dropped and listed with their values in one marker, and the v1 defaults that changed
  (`temperature`, `learning_rate`, `response_length`, `num_ppo_epochs`, `gradient_checkpointing`, `bf16`,
  `logging_steps`) written out, read from the atlas over the v1 releases the repository's TRL pin admits (every v1
  release without a pin; marked where those releases disagree); one marker says batch sizes now count completions;
* a config built by `HfArgumentParser((..., RLOOConfig, ...))` / `TrlParser`: reads of renamed fields follow the
  rename, reads of removed ones are marked, and the parser call is marked (flags and defaults changed);
* v1 trainer attributes (`trainer.generate_completions()`, `.policy`, `.ref_policy`, `.reward_model`) marked.

A module that neither calls nor subclasses TRL's RLOOTrainer, names a v1-only field (`rloo_k`, `kl_coef`, ...) and
defines or imports the project's own `transformers.Trainer` subclass (`kinds.trainer_subclasses.own_trainers`: a
copy of TRL's v1 trainer, Crazytieguy/codenames-oversight) is not rewritten: that copy reads the v1 fields, so each
import of TRL's `RLOOConfig` gets one marker saying so (keep a copy of the v1 config, or port the trainer).
"""

from __future__ import annotations

import functools
import os
import re

import libcst as cst
from libcst.metadata import ParentNodeProvider, QualifiedNameProvider, ScopeProvider

from migrations.atlas import Atlas
from migrations.base import MigrationTransformer, PythonMigration, RuleContext
from migrations.kinds.bindings import holds_config, parser_classes
from migrations.kinds.cst import (
    code,
    dotted,
    make_kwarg,
    parse_expr,
    replace_args,
    side_effect_free,
)
from migrations.kinds.imports import imported_names
from migrations.kinds.options import RLOO_CONFIGS, config_paths
from migrations.kinds.pins import pinned
from migrations.kinds.symbols import mark_trl_imports
from migrations.kinds.trainer_subclasses import own_trainers

RLOO_TRAINERS = config_paths("RLOOTrainer", "rloo_trainer")
# v1 scripts (TRL's own examples) import the config from the trainer module
RLOO_CONFIG_PATHS = RLOO_CONFIGS | {"trl.trainer.rloo_trainer.RLOOConfig"}
V1_KEYWORDS = frozenset({"config", "policy", "ref_policy", "reward_model"})
TRAINER_RENAMES = {"config": "args", "policy": "model", "reward_model": "reward_funcs", "tokenizer": "processing_class"}
TRAINER_DROPPED = {"ref_policy": "v2 reloads the reference from model's path", "data_collator": "v2 collates itself"}
V1_ATTRIBUTES = frozenset({"generate_completions", "policy", "ref_policy", "reward_model"})

# v1 field -> successor with the same meaning (TRL 0.22's `RLOOConfig.__post_init__` table and 1.16's docstrings)
SAME = {"rloo_k": "num_generations", "response_length": "max_completion_length", "cliprange": "epsilon",
        "num_ppo_epochs": "num_iterations"}
# v1 field -> (successor, what differs)
CHANGED = {
    "kl_coef": ("beta", "kl_coef= -> beta=: v1 KL was in the reward, now in the loss"),
    "normalize_reward": ("normalize_advantages", "normalize_reward= -> normalize_advantages=: advantages, not rewards"),
    "num_mini_batches": ("steps_per_generation", "num_mini_batches= -> steps_per_generation=: check the batch math"),
    "exp_name": ("run_name", "exp_name= -> run_name=: v1 added seed and time to it"),
}
# v1 fields with no successor (1.16 lacks them), with what to do
DROPPED = {
    "total_episodes": "set max_steps",
    "missing_eos_penalty": "write a reward function that penalizes completions without EOS",
    "stop_token": "generation stops at EOS", "stop_token_id": "generation stops at processing_class.eos_token_id",
    "token_level_kl": "KL is sequence-level", "whiten_rewards": "gone",
    "local_rollout_forward_batch_size": "per_device_train_batch_size is used",
    "num_sample_generations": "use logging_steps / log_completions",
    "dataset_num_proc": "unused", "sft_model_path": "pass the model to RLOOTrainer(model=)",
    "reward_model_path": "pass the reward model to reward_funcs=",
    "world_size": "computed", "num_total_batches": "computed", "micro_batch_size": "computed",
    "local_batch_size": "computed", "batch_size": "computed", "local_mini_batch_size": "computed",
    "mini_batch_size": "computed", "normalize_advantage": "use normalize_advantages",
}
# v1 fields whose default the v2 successor changed: written out when not passed
KEPT_DEFAULTS = ("learning_rate", "temperature", "response_length", "num_ppo_epochs", "gradient_checkpointing", "bf16",
                 "logging_steps")
BATCH_NOTE = ("batch sizes count completions now (v1: prompts, each sampled rloo_k times): "
              "per_device_train_batch_size * GA * processes must divide by num_generations")


@functools.lru_cache(maxsize=1)
def _atlas() -> Atlas:
    return Atlas.load("trl")


@functools.lru_cache(maxsize=1)
def v1_releases() -> tuple[str, ...]:
    """The atlas releases whose `RLOOTrainer` takes v1's `policy=` and not v2's `reward_funcs=` (0.11.0 - 0.21.0)."""
    atlas = _atlas()
    return tuple(r for r in atlas.releases() if (sig := atlas.signature(r, "trl.RLOOTrainer")) is not None
                 and "policy" in sig.names() and "reward_funcs" not in sig.names())


@functools.cache
def v1_default(field: str, releases: tuple[str, ...] | None = None) -> str | None:
    """The default source text of v1 `RLOOConfig.field` when every one of `releases` (default: every v1 release)
    agrees, else None."""
    releases = v1_releases() if releases is None else releases
    seen = {(_atlas().config_fields(r, "trl.RLOOConfig") or {}).get(field) for r in releases}
    defaults = {f.default for f in seen if f is not None}
    return defaults.pop() if len(defaults) == 1 and None not in seen else None


@functools.cache
def v2_default(field: str) -> str | None:
    f = (_atlas().config_fields("1.16.0", "trl.RLOOConfig") or {}).get(field)
    return None if f is None else f.default


def successor(field: str) -> str:
    return SAME.get(field) or CHANGED.get(field, (field,))[0]


def _resolved(visitor: cst.MetadataDependent, node: cst.CSTNode) -> set[str]:
    """The qualified names of `node`, empty when it may also be something else (a shadowed import)."""
    names = imported_names(visitor, node)
    return names if len(names) == 1 else set()


class _Detector(cst.CSTVisitor):
    """First pass: is this a v1 RLOO file?"""

    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def __init__(self) -> None:
        super().__init__()
        self.v1 = False
        self.trl_trainer = False  # TRL's RLOOTrainer is called or subclassed here
        self.classes: list[str | None] = []  # the enclosing classes: name when a base is TRL's RLOOTrainer
        self.subclass_inits: dict[int, tuple[str, list[str]]] = {}  # id(call) -> (class, the v1 keywords it passes)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        rloo = any(_resolved(self, b.value) & RLOO_TRAINERS for b in node.bases)
        self.trl_trainer |= rloo
        self.classes.append(node.name.value if rloo else None)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.classes.pop()

    def visit_Call(self, node: cst.Call) -> None:
        names = _resolved(self, node.func)
        keys = {a.keyword.value for a in node.args if a.keyword is not None}
        f = node.func
        if self.classes and self.classes[-1] and isinstance(f, cst.Attribute) and f.attr.value == "__init__" and (
                isinstance(f.value, cst.Call) and dotted(f.value.func) == "super"
                or _resolved(self, f.value) & RLOO_TRAINERS) and keys & V1_KEYWORDS:
            self.subclass_inits[id(node)] = (self.classes[-1], sorted(keys & V1_KEYWORDS))
            self.v1 = True
        if names & RLOO_TRAINERS and keys & V1_KEYWORDS or names & RLOO_CONFIG_PATHS and keys & (set(DROPPED) | set(SAME)
                                                                                          | set(CHANGED)):
            self.v1 = True
        if names & RLOO_TRAINERS:
            self.trl_trainer = True


def _subclass_message(cls: str, keywords: list[str]) -> str:
    """The marker of an RLOO v1 subclass's call of the v1 constructor (not rewritten: the subclass was written against
    v1's constructor and its PPO-style internals, which 0.22 replaced)."""
    renames = ", ".join(f"{TRAINER_RENAMES[k]}= not {k}=" for k in keywords if k in TRAINER_RENAMES)
    dropped = [f"{k}=" for k in keywords if k in TRAINER_DROPPED]
    return (f"RLOOTrainer.__init__ (TRL 0.22+) takes {renames or 'model=, reward_funcs=, args='}"
            + (f", no {', '.join(dropped)}" if dropped else "")
            + f"; {cls} subclasses the v1 RLOOTrainer (TRL 0.11 - 0.21) and calls its constructor: the v1 keywords "
            "were removed in 0.25 and v1's internals (its own train loop, policy/ref_policy/reward_model attributes) "
            "are gone, so renaming the keywords alone is not equivalent: port the subclass by hand")


class _Transformer(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider, ScopeProvider, ParentNodeProvider)

    def __init__(self, rule: PythonMigration, ctx: RuleContext,
                 subclass_inits: dict[int, tuple[str, list[str]]] | None = None) -> None:
        super().__init__(rule, ctx)
        self.subclass_inits = subclass_inits or {}
        admitted = pinned(os.path.dirname(ctx.path), v1_releases()) if ctx.path else None
        self.releases = admitted or v1_releases()  # the v1 releases the repository's TRL pin admits

    def _qnames(self, node: cst.CSTNode) -> set[str]:
        return _resolved(self, node)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        sub = self.subclass_inits.get(id(original_node))
        if sub is not None:
            self.todo(original_node, _subclass_message(*sub))
            self.changed = True
            return updated_node
        names = self._qnames(original_node.func)
        if names & RLOO_TRAINERS:
            return self._trainer(original_node, updated_node)
        if names & RLOO_CONFIG_PATHS:
            return self._config(original_node, updated_node)
        if parser_classes(self, original_node, self._qnames) is not None and any(
                self._qnames(c) & RLOO_CONFIG_PATHS for c in parser_classes(self, original_node, self._qnames) or ()):
            self.todo(original_node, "parsed RLOOConfig: v1 flags and defaults changed")
        return updated_node

    def _trainer(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if any(a.keyword is None for a in updated.args):
            self.todo(original, "v1 RLOOTrainer called positionally: use RLOOTrainer(model=, reward_funcs=, args=)")
            return updated
        keys = {a.keyword.value for a in updated.args if a.keyword is not None}
        both = [(key, new) for key, new in TRAINER_RENAMES.items() if key in keys and new in keys]
        if both:  # nothing is edited, so no other marker either (they would say what did not happen)
            for key, new in both:
                self.todo(original, f"both {key}= and {new}= given: keep {new}=")
            return updated
        args: list[cst.Arg] = []
        for a in updated.args:
            key = a.keyword.value if a.keyword is not None else ""
            new = TRAINER_RENAMES.get(key)
            if key in TRAINER_DROPPED:
                if side_effect_free(a.value):
                    self.todo(original, f"{key}= dropped: {TRAINER_DROPPED[key]}")
                    continue
                self.todo(original, f"{key}= is gone ({TRAINER_DROPPED[key]}): remove it")
            if key in ("train_dataset", "eval_dataset"):
                self.todo(original, f"{key}=: v2 needs a prompt column, not input_ids")
            args.append(a.with_changes(keyword=cst.Name(new)) if new else a)
        tok = next((a.value for a in updated.args if a.keyword is not None
                    and a.keyword.value in ("tokenizer", "processing_class")), None)
        if "reward_model" in keys and "reward_processing_classes" not in keys:
            # v1 scored with the policy's tokenizer; v2 would load one from the reward model's name
            if tok is not None and side_effect_free(tok):
                args.append(make_kwarg("reward_processing_classes", tok))
            else:
                self.todo(original, "pass reward_processing_classes= (v1 scored with the policy tokenizer)")
        self.note(original, "RLOOTrainer v1 keywords -> model=, reward_funcs=, args=, processing_class=")
        return replace_args(updated, args)

    def _config(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        given = {a.keyword.value for a in updated.args if a.keyword is not None}
        args: list[cst.Arg] = []
        dropped: list[str] = []
        for a in updated.args:
            key = a.keyword.value if a.keyword is not None else ""
            if key in DROPPED:
                dropped.append(f"{key}={code(a.value)} ({DROPPED[key]})")
                if side_effect_free(a.value):
                    continue
            elif key in SAME or key in CHANGED:
                if successor(key) in given:
                    self.todo(original, f"both {key}= and {successor(key)}= given: keep {successor(key)}=")
                    return updated
                if key in CHANGED:
                    self.todo(original, CHANGED[key][1])
                a = a.with_changes(keyword=cst.Name(successor(key)))
            args.append(a)
        if dropped:
            self.todo(original, "removed RLOO v1 fields: " + "; ".join(dropped))
        unsure: list[str] = []
        if not any(a.star for a in updated.args):
            for field in KEPT_DEFAULTS:
                new = successor(field)
                if field in given or new in given:
                    continue
                old = v1_default(field, self.releases)
                if old is None:
                    unsure.append(f"{new}=")
                elif old != v2_default(new):
                    args.append(make_kwarg(new, parse_expr(old)))
        if unsure:
            self.todo(original, f"set {', '.join(unsure)}: v1 defaults differ between TRL releases (pin trl)")
        self.todo(original, BATCH_NOTE)
        self.note(original, "RLOOConfig v1 fields -> v2 (renamed, removed, old defaults written out)")
        return replace_args(updated, args)

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        attr = original_node.attr.value
        if attr in V1_ATTRIBUTES and holds_config(self, original_node.value, RLOO_TRAINERS, self._qnames):
            self.todo(original_node, f"trainer.{attr}: v1 RLOO API, gone in 0.25")
            return updated_node
        if not (attr in SAME or attr in CHANGED or attr in DROPPED) or \
                not holds_config(self, original_node.value, RLOO_CONFIG_PATHS, self._qnames):
            return updated_node
        if attr in DROPPED:
            self.todo(original_node, f"RLOOConfig.{attr} is gone: keep it in the script's own arguments")
            return updated_node
        if attr in CHANGED:
            self.todo(original_node, CHANGED[attr][1])
        return updated_node.with_changes(attr=cst.Name(successor(attr)))


#: a v1 field no other TRL config has, set or read (`rloo_k=`, `args.kl_coef`): code written for the v1 config
_V1_ONLY = re.compile(r"\b(?:rloo_k|kl_coef|response_length|num_ppo_epochs|cliprange|local_rollout_forward_batch_size"
                      r"|num_sample_generations|stop_token_id|total_episodes|sft_model_path|reward_model_path"
                      r"|missing_eos_penalty|non_eos_penalty|whiten_rewards|token_level_kl)\b")
_OWN_TRAINER = ("{{name}} feeds this project's own trainer ({own}, a transformers.Trainer subclass: a copy of TRL's RLOO "
                "v1 trainer?), which reads v1 fields (rloo_k, kl_coef, response_length, ...) the RLOOConfig of TRL "
                "0.22+ does not have: not rewritten. Keep a copy of the v1 RLOOConfig from the TRL release the "
                "project pinned (0.11 - 0.21; its base is compat.trl.OnPolicyConfig), or port the trainer to "
                "RLOOTrainer(model=, reward_funcs=, args=)")


class RlooV1ToRloo(PythonMigration):
    summary = "RLOO v1 (config=, policy=, ref_policy=, reward_model=; rloo_k, kl_coef, ...) -> the 0.22+ RLOOTrainer"
    triggers = ("RLOOTrainer", "RLOOConfig")
    requires = ("trl",)

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        detector = _Detector()
        wrapper.visit(detector)
        if not detector.trl_trainer and _V1_ONLY.search(wrapper.module.code):
            own = own_trainers(wrapper.module.code, ctx.path)
            if own:
                return mark_trl_imports(self, wrapper, ctx, {"RLOOConfig"}, _OWN_TRAINER.format(own=", ".join(own)))
        if not detector.v1:
            return wrapper.module
        t = _Transformer(self, ctx, detector.subclass_inits)
        module = wrapper.visit(t)
        return module if t.changed else wrapper.module


MIGRATION = RlooV1ToRloo()
