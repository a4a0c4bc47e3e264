"""trainer-kwargs-to-config: DPOTrainer / SFTTrainer / RewardTrainer keywords that moved into their configs.

TRL 0.9 moved the training options of `DPOTrainer(beta=, max_length=, ...)` and `SFTTrainer(dataset_text_field=,
max_seq_length=, packing=, ...)` into `DPOConfig` / `SFTConfig` (the trainer keywords stayed as deprecated overrides);
TRL 0.13 removed them from the trainers' signatures (read from the 0.12.2 and 0.13.0 wheels); `RewardTrainer(max_length=)`
followed later. On TRL 1.13-1.16 every one of them is a `TypeError`.

For each call of one of these trainers (resolved by qualified name) the rule finds the `args` object and moves the
keywords there, under the target's field name (`max_seq_length` -> `SFTConfig.max_length`):

* `args=TrainingArguments(...)` / `args=DPOConfig(...)` inline, or a name bound once in the same scope to such a call:
  the keywords are appended to that call (its layout and comments kept). A `transformers.TrainingArguments(...)` becomes
  the trainer's config class, and the TrainingArguments defaults the config overrides (`learning_rate`,
  `logging_steps`, `gradient_checkpointing`, `bf16`) are written out when the call does not set them - the values that
  user provably got from TrainingArguments - so the run does not change;
* a value that is not a literal and reads a name bound after the config was built, or an `args` produced by
  `HfArgumentParser(...).parse_args_into_dataclasses()` or `TrlParser(...).parse_args_and_config()` (whose class tuple
  is switched to the config class): the value is
  assigned to the config object right before the trainer is built (`training_args.beta = 0.1`), which is what the old
  trainer did with its keyword (it overrode the config);
* no `args` at all: `args=<Config>(output_dir="tmp_trainer", ...)` (the output dir transformers' Trainer used);
* `args = make_args(cfg)` where `make_args` is a module-level function of the same file, defined above the trainer
  call and called nowhere else, whose only `return` is such a call (train-test-regime's `create_training_args`):
  that call is edited (switched to the config class, defaults written out), literal values are moved into it, any
  other value is assigned to the returned object before the trainer is built;
* `args=self.x` with `self.x = TrainingArguments(...)` / a config call earlier in the same function, the only binding
  of any `.x` in the module: as a name bound once;
* `args` unpacked from a parser of the trainer's own config (`HfArgumentParser((ScriptArguments, SFTConfig))`): the
  values are assigned to it before the trainer, with no class switch;
* a keyword passed with its 0.x signature default (`max_seq_length=None`, `beta=0.1`; `_SIGNATURE_DEFAULTS`) did what
  leaving it out did: it is dropped, not moved;
* the repository's own classes of other modules, known from the run's index (`Options.local_classes`,
  `migrations.kinds.local_classes`, built by the runner from the files it walks; none for a single source): a config
  class deriving from the trainer's TRL config (`from alignment import SFTConfig`, re-exported, `class SFTConfig(
  trl.SFTConfig)`) counts as that config (inline, assigned or parsed, as above) unless a class on the way defines its
  own `__init__`; a parser deriving from `HfArgumentParser` / `TrlParser` counts as one for the parse methods it
  does not override, and for a method of its own built on them (`LocalClasses.delegates`: alignment-handbook's
  `H4ArgumentParser.parse()`). A `TrainingArguments` subclass that `config_base` proves feeds this trainer only
  counts as its config too: `local-config-base` bases it on the TRL config in its own module. Any other parsed class
  deriving from `TrainingArguments` but not from the TRL config gets a marker naming it: TRL 1.x SFTTrainer rebuilds
  it as `SFTConfig(**args.to_dict())` (its own fields fail, attributes set on it are lost), DPO/RewardTrainer read
  config fields from it, so the fix is to base that class on the TRL config;
* an `args` the file never builds (a parameter without annotation or annotated `TrainingArguments` / the trainer's
  config, `self.args` assigned nowhere in the file, a name bound once to an attribute read,
  `training_args = script_args.training_args`, or to a call of a function or method of the module annotated to return
  one of those two classes, `training_args = self._create_sft_training_arguments()`):
  `args=trainer_config(SFTConfig, args, max_length=...)` from `compat.trl`, the config TRL 0.9 - 0.12 built from
  that object and the keywords; any other `args` the rule cannot follow: a marker at the call, nothing moved;
* `super().__init__(..., beta=...)` in a subclass of one of these trainers: a marker (the subclass's own
  signature forwards the keyword; where it should go is the subclass author's decision). Its 0.x positionals past
  the shared prefix are passed by keyword first (`super().__init__(model, ref_model, beta, ...)` ->
  `super().__init__(model, ref_model, beta=beta, ...)`: the same call on 0.x), then marked like keywords.

A keyword already set on the config is never duplicated: the trainer's keyword is dropped when it is the same code,
else marked. Keywords without a field on the target config (`max_prompt_length`, `padding_value`, `infinite`, ...) stay
where they are with a marker saying what happened to them. DPOTrainer's 0.x positional layout
(`DPOTrainer(model, ref, beta, ...)`) and SFT/Reward positionals past the 6th are turned into keywords first.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import (
    ParentNodeProvider,
    PositionProvider,
    QualifiedNameProvider,
    QualifiedNameSource,
    ScopeProvider,
)
from packaging.version import Version

from migrations.atlas import Atlas, Field
from migrations.base import (
    LazyMetadata,
    MigrationTransformer,
    PythonMigration,
    RuleContext,
    add_todo_lines,
)
from migrations.kinds.bindings import module_class, plain_value
from migrations.kinds.cst import (
    FunctionBodyVisitor,
    code,
    dotted,
    explode_call,
    literal_value,
    make_kwarg,
    parse_expr,
    replace_args,
    side_effect_free,
)
from migrations.kinds.imports import code_words, ensure_imports, top_level_imports
from migrations.kinds.local_classes import LocalClasses
from migrations.kinds.options import ARGUMENT_PARSERS as _PARSER
from migrations.kinds.options import PARSE_METHODS as _PARSE_METHODS

_MISSING = object()

ANCHOR = "trainer-kwargs-to-config"

# the 0.8.6 ... 0.12.2 signatures (identical over that range but for tokenizer -> processing_class in 0.12)
_OLD_PARAMS = {
    "DPOTrainer": (
        "model", "ref_model", "beta", "label_smoothing", "loss_type", "args", "data_collator", "label_pad_token_id",
        "padding_value", "truncation_mode", "train_dataset", "eval_dataset", "tokenizer", "model_init", "callbacks",
        "optimizers", "preprocess_logits_for_metrics", "max_length", "max_prompt_length", "max_target_length",
        "peft_config", "is_encoder_decoder", "disable_dropout", "generate_during_eval", "compute_metrics",
        "precompute_ref_log_probs", "dataset_num_proc", "model_init_kwargs", "ref_model_init_kwargs",
        "model_adapter_name", "ref_adapter_name", "reference_free", "force_use_ref_model"),
    "SFTTrainer": (
        "model", "args", "data_collator", "train_dataset", "eval_dataset", "tokenizer", "model_init", "compute_metrics",
        "callbacks", "optimizers", "preprocess_logits_for_metrics", "peft_config", "dataset_text_field", "packing",
        "formatting_func", "max_seq_length", "infinite", "num_of_sequences", "chars_per_token", "dataset_num_proc",
        "dataset_batch_size", "neftune_noise_alpha", "model_init_kwargs", "dataset_kwargs", "eval_packing"),
    "RewardTrainer": (
        "model", "args", "data_collator", "train_dataset", "eval_dataset", "tokenizer", "model_init", "compute_metrics",
        "callbacks", "optimizers", "preprocess_logits_for_metrics", "max_length", "peft_config"),
}
# positionals from this index on meant something else in 0.x than on the target (first differing parameter)
_SAME_PREFIX = {"DPOTrainer": 2, "SFTTrainer": 6, "RewardTrainer": 6}
# where `args` sits on the target (1.13-1.16 signatures)
_ARGS_POS = {"DPOTrainer": 2, "SFTTrainer": 1, "RewardTrainer": 1}

# old trainer keyword -> field of the target config (1.13 ... 1.16 config fields are identical for these)
_MOVED: dict[str, dict[str, str]] = {
    "DPOTrainer": {k: k for k in ("beta", "label_smoothing", "loss_type", "truncation_mode", "max_length",
                                  "disable_dropout", "precompute_ref_log_probs", "dataset_num_proc",
                                  "model_init_kwargs")},
    "SFTTrainer": {**{k: k for k in ("dataset_text_field", "packing", "dataset_num_proc", "neftune_noise_alpha",
                                     "model_init_kwargs", "dataset_kwargs", "eval_packing")},
                   "max_seq_length": "max_length"},
    "RewardTrainer": {"max_length": "max_length"},
}
# the 0.x trainer signatures' defaults of the moved keywords, the same in every release up to 0.12.2 that has the
# keyword (read from the wheels; `loss_type` is not listed: its default went from "sigmoid" to None in 0.9). A keyword passed with
# exactly its default did what leaving it out did, so it is dropped, not moved: `SFTTrainer(max_seq_length=None)`
# never overrode `SFTConfig.max_seq_length`, and `SFTConfig(max_length=None)` on TRL 1.x would turn truncation off.
_SIGNATURE_DEFAULTS: dict[str, dict[str, object]] = {
    "DPOTrainer": {"beta": 0.1, "label_smoothing": 0, "truncation_mode": "keep_end", "max_length": None,
                   "disable_dropout": True, "precompute_ref_log_probs": False, "dataset_num_proc": None,
                   "model_init_kwargs": None},
    "SFTTrainer": {"dataset_text_field": None, "packing": False, "dataset_num_proc": None,
                   "neftune_noise_alpha": None, "model_init_kwargs": None, "dataset_kwargs": None,
                   "eval_packing": None, "max_seq_length": None},
    "RewardTrainer": {"max_length": None},
}
#: TRL 0.x took the names of a model's trainable and reference adapters; TRL 1.13 - 1.16's DPOTrainer, given a
#: PeftModel and no ref_model, copies the adapter named "default" into a frozen "ref" one (`dpo_trainer.py`:
#: `model.peft_config["default"]`, a KeyError for a model without one; jondurbin/bagel)
_ADAPTERS = ("gone in TRL 1.x: DPOTrainer trains the adapter named 'default' and copies it into a frozen 'ref' one "
             "itself: load the trainable adapter as adapter_name='default' and drop the separately loaded reference "
             "adapter (another name is a KeyError: 'default')")
# old trainer keywords with no field on the target config -> what to do (marker text)
_GONE: dict[str, dict[str, str]] = {
    "DPOTrainer": {
        "label_pad_token_id": "no DPOConfig field on TRL 1.13+ (labels are built internally): drop it",
        "padding_value": "no DPOConfig field on TRL 1.13+: set the tokenizer's pad_token instead",
        "max_prompt_length": "gone in TRL 1.x: DPOConfig has max_length (prompt+completion) and truncation_mode",
        "max_target_length": "gone in TRL 1.x (encoder-decoder DPO): drop it",
        "is_encoder_decoder": "gone in TRL 1.x (read from the model config): drop it",
        "generate_during_eval": "gone in TRL 1.x: log samples with a callback instead",
        "ref_model_init_kwargs": "gone in TRL 1.x: build ref_model yourself with these kwargs",
        "model_adapter_name": _ADAPTERS,
        "ref_adapter_name": _ADAPTERS,
        "reference_free": "gone in TRL 1.x: no reference-free DPO; pick a loss_type without ref",
        "force_use_ref_model": "gone in TRL 1.x: pass ref_model explicitly",
    },
    "SFTTrainer": {
        "infinite": "gone with ConstantLengthDataset: use packing=True in SFTConfig, drop it",
        "num_of_sequences": "gone with ConstantLengthDataset: packing needs no buffer size, drop it",
        "chars_per_token": "gone with ConstantLengthDataset: packing works on tokens, drop it",
        "dataset_batch_size": "gone in TRL 1.x (tokenization batch size): drop it",
    },
    "RewardTrainer": {},
}
_CONFIG = {"DPOTrainer": "DPOConfig", "SFTTrainer": "SFTConfig", "RewardTrainer": "RewardConfig"}
_STEM = {"DPOTrainer": "dpo", "SFTTrainer": "sft", "RewardTrainer": "reward"}
# trainers that read config-only fields from `args` (TRL 1.16 DPOTrainer/RewardTrainer do not convert a plain
# TrainingArguments the way SFTTrainer does): a TrainingArguments `args` is switched even with no keyword to move
_NEEDS_CONFIG = {"DPOTrainer", "RewardTrainer"}


def _paths(name: str, stem: str, suffix: str) -> set[str]:
    return {f"trl.{name}", f"trl.trainer.{name}", f"trl.trainer.{stem}_{suffix}.{name}", f"compat.trl.{name}"}


_TRAINER_PATHS = {p: t for t in _CONFIG for p in _paths(t, _STEM[t], "trainer")}
_CONFIG_PATHS = {p: c for c in _CONFIG.values() for p in _paths(c, c[:-6].lower(), "config")}
_TRAINING_ARGS = {"transformers.TrainingArguments", "transformers.training_args.TrainingArguments"}

# TrainingArguments defaults (transformers 4.x, what a TrainingArguments user got) that the TRL 1.13-1.16 configs
# override; written out when a TrainingArguments(...) call becomes a config call and does not set them
_TA_DEFAULTS = {"learning_rate": "5e-05", "logging_steps": "500", "gradient_checkpointing": "False", "bf16": "False"}
_OUTPUT_DIR = '"tmp_trainer"'


#: the types transformers' TrainingArguments declares for `_TA_DEFAULTS` (a class field written out needs one)
TA_DEFAULT_TYPES = {"learning_rate": "float", "logging_steps": "float", "gradient_checkpointing": "bool",
                    "bf16": "bool"}


def training_arguments_defaults() -> dict[str, str]:
    """The TrainingArguments defaults (as code) the TRL 1.13-1.16 configs override (`local-config-base` writes them
    out on a class it bases on a TRL config)."""
    return dict(_TA_DEFAULTS)


# fields a TRL 1.x config adds whose TRL default does what TRL 0.x did without them, so a rebased class may keep them
# off the command line (`init=False`) where another dataclass of the same parser declares the option:
# `trust_remote_code` (False) only feeds `model_init_kwargs.setdefault(...)` and the processing class TRL loads itself,
# both of which TRL 0.x loaded without it (alignment-handbook's ModelArguments declares --trust_remote_code)
_INERT_FIELDS = frozenset({"trust_remote_code"})


@dataclass(frozen=True)
class ConfigBase:
    """What `config_base` proves: the TRL config to derive from, and the config fields to keep off the command line
    (`init=False`, with the TRL default: annotation, default as code) because a class parsed beside it declares them."""

    config: str
    hidden: tuple[tuple[str, str, str], ...] = ()


def _fields_of(local: LocalClasses, qname: str, release: str) -> set[str] | None:
    """Every field name the class `qname` (local, or TRL's per the atlas) declares on `release`; None if unknown."""
    if local.find(qname) is not None:
        classes, outside = local.lineage(qname)
        found = {f for c in classes for f in c.fields}
        for base in outside:
            more = _fields_of(local, base, release)
            if more is None:
                return None
            found |= more
        return found
    if not qname.startswith("trl."):
        return None
    fields = Atlas.load("trl").config_fields(release, qname)
    return None if fields is None else set(fields)


def _target_config_fields(target: Version | None, config: str) -> Iterator[tuple[str, dict[str, Field]]]:
    """(release, fields) of TRL's `config` class (the atlas: field name -> field) on every release from the target
    on (never below 1.13, the line this rule moves code to)."""
    atlas = Atlas.load("trl")
    floor = max(target or Version("1.13.0"), Version("1.13.0"))
    for release in atlas.releases():
        if Version(release) >= floor:
            yield release, atlas.config_fields(release, f"trl.{config}") or {}


def config_base(local: LocalClasses | None, qname: str, target: Version | None = None) -> ConfigBase | None:
    """The TRL config the repository's class `qname` should derive from instead of `transformers.TrainingArguments`,
    or None. Only for a class of the run's index that derives from TrainingArguments directly and is a `@dataclass`
    (its own defaults are fields), defines no `__init__` / `__post_init__` on its lineage, has no local subclass,
    whose every instance the index sees passed to a trainer goes as `args` to one TRL trainer (DPO/SFT/Reward or a
    local subclass of it), and which no parser takes beside a class declaring an option the TRL config adds on a
    release from `target` on (two dataclasses of one HfArgumentParser with one option are an argparse error), but for
    `_INERT_FIELDS`, returned in `hidden`. Its fields stay, the TrainingArguments defaults the config changes are
    written out on it (`local-config-base`), so the class gives what it gave, and the trainer gets its config's fields."""
    if local is None:
        return None
    cls = local.find(qname)
    if cls is None or not cls.dataclass or not set(cls.bases) & _TRAINING_ARGS \
            or local.base_in(cls.qname, _CONFIG_PATHS) is not None:
        return None
    if local.defines(cls.qname, "__init__") or local.defines(cls.qname, "__post_init__") \
            or local.subclassed(cls.qname):
        return None
    trainers = set()
    for use in local.uses_of(cls.qname):
        trainer = _TRAINER_PATHS.get(use.callee)
        if trainer is None:
            base = local.base_in(use.callee, _TRAINER_PATHS)
            if base is None or use.slot != "args":  # a local trainer subclass: only its `args=` is known to be it
                return None
            trainer = _TRAINER_PATHS[base]
        if use.slot not in ("args", str(_ARGS_POS[trainer])):
            return None
        trainers.add(trainer)
    if len(trainers) != 1:
        return None
    config = _CONFIG[trainers.pop()]
    hidden: dict[str, tuple[str, str, str]] = {}
    for release, fields in _target_config_fields(target, config):
        added = {n: f for n, f in fields.items() if not f.origin.startswith("transformers.")}
        for other in local.parsed_with(cls.qname):
            theirs = _fields_of(local, other, release) if other else None
            if theirs is None:
                return None
            clash = (set(added) & theirs) - set(cls.fields)
            if clash - _INERT_FIELDS:
                return None
            hidden.update({n: (n, added[n].annotation, added[n].default or "None") for n in clash})
    return ConfigBase(config, tuple(sorted(hidden.values())))


@dataclass
class _Plan:
    trainer: str
    call: cst.Call
    moves: list[tuple[str, str, cst.BaseExpression]] = field(default_factory=list)  # (field, trainer keyword, value)
    config_call: cst.Call | None = None  # edit this call (inline or the assignment's value)
    inline: bool = False
    attr_target: str | None = None  # assign `name.field = value` before the trainer statement
    parser_class: cst.CSTNode | None = None  # the TrainingArguments element of an HfArgumentParser tuple
    late: list[tuple[str, str, cst.BaseExpression]] = field(default_factory=list)  # moves assigned as attributes
    create: bool = False
    switch: bool = False  # the config call is a transformers.TrainingArguments(...)
    drop: set[str] = field(default_factory=set)  # trainer keywords to drop
    defaulted: set[str] = field(default_factory=set)  # trainer keywords passed with their 0.x default: dropped
    parsed: bool = False  # `args` is unpacked from a parser of the trainer's own config class (no switch needed)
    hint: str | None = None  # what the marker says instead of the generic "move ... to args" (a local config class)
    unseen: bool = False  # `args` is a parameter without annotation or an attribute the file never assigns


class _Planner(LazyMetadata, cst.CSTVisitor):
    # PositionProvider is resolved when a plan first needs a line (`LazyMetadata`): most files have no plan
    METADATA_DEPENDENCIES = (QualifiedNameProvider, ScopeProvider, ParentNodeProvider)

    def __init__(self, local: LocalClasses | None = None, target: Version | None = None, text: str = "",
                 path: str | None = None) -> None:
        super().__init__()
        self.local = local  # the run's index of the repository's classes (`kinds.local_classes`)
        self.path = path  # the module's path in the run (how the index records it)
        self.target = target  # the target TRL
        self.text = text  # the module's code, as the engine holds it
        self.plans: list[_Plan] = []
        self.classes: list[str | None] = []  # the TRL trainer each enclosing class derives from
        # id(call) -> (trainer, moved/gone keywords, 0.x positionals left, positionals turned into keywords)
        self.super_calls: dict[int, tuple[str, list[str], list[str], bool]] = {}

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append(next((_TRAINER_PATHS[q] for b in node.bases for q in sorted(self.qnames(b.value))
                                  if q in _TRAINER_PATHS), None))

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.classes.pop()

    def _super_init(self, node: cst.Call) -> str | None:
        """The TRL trainer whose __init__ this `super().__init__(...)` / `Base.__init__(self, ...)` calls."""
        func = node.func
        if not (self.classes and self.classes[-1] and isinstance(func, cst.Attribute)
                and func.attr.value == "__init__"):
            return None
        value = func.value
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "super":
            return self.classes[-1]
        return self.classes[-1] if self.qnames(value) & set(_TRAINER_PATHS) else None

    def qnames(self, node: cst.CSTNode) -> set[str]:
        try:
            return {q.name for q in self.get_metadata(QualifiedNameProvider, node, set())
                    if q.source == QualifiedNameSource.IMPORT}
        except KeyError:
            return set()

    def visit_Call(self, node: cst.Call) -> None:
        base = self._super_init(node)
        if base is not None:
            # positionals past the prefix the 0.x and 1.x signatures share land on other parameters on the target
            # (`Base.__init__(self, ...)` passes self first)
            explicit = not (isinstance(node.func.value, cst.Call))  # type: ignore[attr-defined]
            positional = [a for a in node.args if a.keyword is None and not a.star][int(explicit):]
            shifted = list(_OLD_PARAMS[base][_SAME_PREFIX[base]:len(positional)])
            # `super().__init__(...)`: the 0.x positionals become the keywords they bound (the same call on 0.x)
            named = _keywordize(base, node) if shifted and not explicit else None
            if named is not None:
                shifted = []
            keys = [a.keyword.value for a in (named or node.args) if a.keyword is not None
                    and (a.keyword.value in _MOVED[base] or a.keyword.value in _GONE[base])]
            if keys or shifted or named is not None:
                self.super_calls[id(node)] = (base, keys, shifted, named is not None)
            return
        trainer = next((_TRAINER_PATHS[q] for q in sorted(self.qnames(node.func)) if q in _TRAINER_PATHS), None) \
            or self._local_trainer(node.func)
        if trainer is None:
            return
        plan = _Plan(trainer, node)
        args = _keywordize(trainer, node)
        if args is None:
            return
        for a in args:
            if a.keyword is not None and a.keyword.value in _MOVED[trainer]:
                if _is_signature_default(trainer, a.keyword.value, self._bound_literal(a.value)):
                    plan.defaulted.add(a.keyword.value)
                else:
                    plan.moves.append((_MOVED[trainer][a.keyword.value], a.keyword.value, a.value))
        gone = any(a.keyword is not None and a.keyword.value in _GONE[trainer] for a in args)
        if plan.moves or trainer in _NEEDS_CONFIG:
            self._locate_args(plan, args)
        if plan.moves or gone or plan.switch or plan.parser_class is not None or plan.defaulted:
            self.plans.append(plan)

    def _local_trainer(self, func: cst.BaseExpression) -> str | None:
        """The TRL trainer a repository class derives from when nothing on its local lineage defines `__init__`
        (luka-group/mDPO's `class mDPOTrainer(DPOTrainer)`, overriding the loss only) or each `__init__` there only
        hands `*args, **kwargs` on to the base's: its calls are that trainer's calls, keywords and all (the run's
        index; a class of this module by its module's name)."""
        if self.local is None:
            return None
        for name in self._own_class_names(func):
            cls = self.local.find_in(self.path, name)
            if cls is None:
                continue
            classes, _outside = self.local.lineage(cls.qname)
            base = self.local.base_in(cls.qname, _TRAINER_PATHS)
            if base is not None and not any(c.opaque for c in classes) \
                    and (not self.local.defines(cls.qname, "__init__") or self.local.forwards_init(cls.qname)):
                return _TRAINER_PATHS[base]
        return None

    def _bound_literal(self, value: cst.BaseExpression) -> cst.BaseExpression:
        """`value`, or for a name its scope binds once, by a plain assignment of a literal, that literal
        (`max_seq_length = None` ... `SFTTrainer(max_seq_length=max_seq_length)`, NomanTrips/verify_step_by_step's
        pretrain.py): what the keyword passes."""
        bound = plain_value(self, value) if isinstance(value, cst.Name) else None
        return bound if bound is not None and literal_value(bound, _MISSING) is not _MISSING else value

    def _own_class_names(self, func: cst.BaseExpression) -> list[str]:
        """The qualified names `func` resolves to through imports, or for a class this module defines, the name the
        run's index knows it by (its module's)."""
        names = sorted(self.qnames(func))
        if not names and self.local is not None and isinstance(func, cst.Name) \
                and module_class(self, func) is not None:
            own = self.local.defined_in(self.path, func.value)
            names = [own.qname] if own is not None else []
        return names

    def _locate_args(self, plan: _Plan, args: list[cst.Arg]) -> None:
        value = next((a.value for a in args if a.keyword is not None and a.keyword.value == "args"), None)
        if value is None and any(a.star for a in args):
            # `DPOTrainer(**base_kwargs, beta=...)`: the splat may hold `args` (rlhf-compact-llm's does); a new
            # `args=` beside it would be passed twice (a TypeError), so the keywords stay, marked
            return
        if value is None:
            positional = [a for a in args if a.keyword is None]
            if len(positional) > _ARGS_POS[plan.trainer]:
                value = positional[_ARGS_POS[plan.trainer]].value
        if value is None:
            plan.create = bool(plan.moves)
            return
        if isinstance(value, cst.Call) and self._config_kind(value.func) is not None:
            plan.config_call, plan.inline = value, True
            plan.switch = self._config_kind(value.func) == "TrainingArguments"
            return
        if isinstance(value, cst.Call):
            # `args=get_training_args(args)`, built by a function (umass-ml4ed/feedback-gen-dpo, whose SFT run calls it
            # too): what it returns is decided there, and `compat.trl.trainer_config` checks the object it gets
            plan.unseen = True
            return
        if isinstance(value, cst.Attribute):
            assignment = self._single_attribute_assignment(value, plan.call)
        elif isinstance(value, cst.Name):
            assignment = self._single_assignment(value) or self._reaching_assignment(value, plan.call)
        else:
            return
        if assignment is None:
            plan.unseen = self._unannotated_or_foreign(value, _CONFIG[plan.trainer])
            return
        target, assigned = assignment
        if isinstance(assigned, cst.Call) and self._config_kind(assigned.func) is not None \
                and isinstance(target, (cst.Name, cst.Attribute)):
            plan.config_call = assigned
            plan.switch = self._config_kind(assigned.func) == "TrainingArguments"
            line = self.lazy_metadata(PositionProvider, assigned).start.line  # type: ignore[attr-defined]
            plan.late = [m for m in plan.moves if not self._bound_before(m[2], line)]
            if plan.late:
                plan.attr_target = code(value)
            return
        if not isinstance(value, cst.Name):
            return
        if isinstance(assigned, cst.Attribute) and dotted(assigned) is not None:
            # `training_args = script_args.training_args` (TRL's stack_llama_2 sft_llama2.py and its copies): an
            # object built elsewhere, like a parameter's
            plan.unseen = True
            return
        factory = self._factory_config(assigned, plan.call)
        if factory is not None:
            plan.config_call = factory
            plan.switch = self._config_kind(factory.func) == "TrainingArguments"
            plan.late = [m for m in plan.moves if not _literal(m[2])]  # other names are not in the function's scope
            if plan.late:
                plan.attr_target = value.value
            return
        if self._annotated_factory(assigned, _CONFIG[plan.trainer]):
            # `training_args = self._create_sft_training_arguments()`, a method annotated `-> TrainingArguments`
            # (deepradadiya/RLHF-Pipeline): built elsewhere, maybe by an override, like an annotated parameter's
            plan.unseen = True
            return
        parsed = self._parsed_class(assigned, target, value.value)
        if parsed is None:
            plan.hint = self._local_arguments_hint(plan, self._parsed_class(assigned, target, value.value, loose=True))
            return
        if self.qnames(parsed) & _TRAINING_ARGS:
            if self._option_clash(parsed, _CONFIG[plan.trainer]):
                # switching the parser's class would give it an option another of its classes declares (an
                # argparse error at start-up: mesolitica/malaya's `ScriptArguments` with `beta`, `max_length`
                # beside TrainingArguments): the parsed object stays, the trainer gets the config built from it
                plan.unseen = True
                return
            plan.parser_class = parsed
        elif self._config_kind(parsed) == _CONFIG[plan.trainer]:
            plan.parsed = True
        elif self._plain_arguments(parsed, _CONFIG[plan.trainer]):
            plan.unseen = True  # `args=trainer_config(SFTConfig, training_args, ...)`
            return
        else:
            plan.hint = self._local_arguments_hint(plan, parsed)
            return
        plan.attr_target = value.value
        # `beta=training_args.beta` (the option parsed into the config, see old-script-arguments) moves nothing
        plan.late = [m for m in plan.moves if code(m[2]).strip() != f"{value.value}.{m[0]}"]
        plan.drop |= {kw for fld, kw, v in plan.moves if code(v).strip() == f"{value.value}.{fld}"}

    def _option_clash(self, parsed: cst.CSTNode, config: str) -> bool:
        """Whether the parser tuple holding `parsed` (its TrainingArguments element) has another class that may
        declare a field `config` adds to TrainingArguments on a release from the target on: two dataclasses of one
        HfArgumentParser with one option are an argparse error. A class whose fields are not known counts."""
        element = self.get_metadata(ParentNodeProvider, parsed, None)
        sequence = self.get_metadata(ParentNodeProvider, element, None) if element is not None else None
        if not isinstance(sequence, (cst.Tuple, cst.List)):
            return True
        target = max(self.target or Version("1.13.0"), Version("1.13.0"))
        added = {n for _, fields in _target_config_fields(target, config)
                 for n, f in fields.items() if not f.origin.startswith("transformers.")}
        for other in sequence.elements:
            if other.value is parsed:
                continue
            fields = self._class_fields(other.value, str(target))
            if fields is None or fields & added:
                return True
        return False

    def _class_fields(self, node: cst.BaseExpression, release: str) -> set[str] | None:
        """The fields of the class `node` names (the run's index of the repository's classes, this module's own
        included; TRL's and transformers' dataclasses by the atlas); None when unknown."""
        from migrations.kinds.script_fields import compat_own_fields, library_fields

        names = sorted(self.qnames(node))
        if not names and isinstance(node, cst.Name) and module_class(self, node) is not None:
            return self._module_class_fields(node, release)
        if len(names) != 1:
            return None
        qname = names[0]
        if qname.startswith(("transformers.", "compat.trl.")):
            found = library_fields(qname, release) if qname.startswith("transformers.") else compat_own_fields(qname)
            return None if found is None else set(found)
        if self.local is None and not qname.startswith("trl."):
            return None
        return _fields_of(self.local, qname, release) if self.local is not None else \
            (set(Atlas.load("trl").config_fields(release, qname) or {}) or None)

    def _module_class_fields(self, name: cst.Name, release: str) -> set[str] | None:
        """The fields of this module's own class `name`: the names its body annotates, and its bases' (each known)."""
        cls = module_class(self, name)
        if cls is None or cls.keywords:
            return None
        found = {s.target.value for line in cls.body.body if isinstance(line, cst.SimpleStatementLine)
                 for s in line.body if isinstance(s, cst.AnnAssign) and isinstance(s.target, cst.Name)}
        for base in cls.bases:
            if base.keyword is not None or base.star or base.value is name:
                return None
            more = self._class_fields(base.value, release)
            if more is None:
                return None
            found |= more
        return found

    def _unannotated_or_foreign(self, value: cst.Name | cst.Attribute, config: str) -> bool:
        """`args` holds an object the file never builds: an attribute assigned nowhere in it (`self.args`), or a name
        that is only a parameter (or an import, or bound nowhere in a file that star-imports a module): what it holds
        is decided elsewhere. A parameter counts without annotation, or annotated with transformers'
        `TrainingArguments` or the trainer's own TRL config `config`
        (`def main(script_args, training_args: TrainingArguments, ...)` called with a parser's output: alexisrozhkov/
        llm-calib), the two kinds of object `compat.trl.trainer_config` takes. A name assigned in the file (its binding
        not one the rule follows), a parameter annotated with any other class (the project's own): False."""
        if isinstance(value, cst.Attribute):
            assigned = re.compile(rf"\.{re.escape(value.attr.value)}\s*(?:=(?!=)|:[^\n]*=)")
            return bool(self.text) and assigned.search(self.text) is None
        scope = self.get_metadata(ScopeProvider, value, None)
        found = [a for a in scope[value.value] if hasattr(a, "node")] if scope is not None else []
        if not found and scope is not None and not scope.assignments[value.value] and self._star_import():
            # bound nowhere in the file, which star-imports a module: the name comes from there
            # (andreeatomescu16/MoonLandingAI: `from training_args import *` gives `training_arguments`)
            return value.value not in dir(builtins)
        if len(found) != 1:
            return False
        node = found[0].node
        if isinstance(node, (cst.Import, cst.ImportFrom)):
            return True
        if not isinstance(node, cst.Param):
            return False
        return node.annotation is None or self._args_class(node.annotation.annotation, config)

    def _star_import(self) -> bool:
        """The module has a `from x import *` at its top level."""
        return self._module is not None and any(
            isinstance(s, cst.SimpleStatementLine) and any(
                isinstance(i, cst.ImportFrom) and isinstance(i.names, cst.ImportStar) for i in s.body)
            for s in self._module.body)

    def _args_class(self, annotation: cst.BaseExpression, config: str) -> bool:
        """`annotation` names transformers' `TrainingArguments`, the trainer's own TRL config `config`, or a project
        class that only changes TrainingArguments defaults (`_plain_arguments`): the kinds of object
        `compat.trl.trainer_config` takes."""
        q = self.qnames(annotation)
        return bool(q & _TRAINING_ARGS) or any(_CONFIG_PATHS.get(n) == config for n in q) \
            or self._plain_arguments(annotation, config)

    def _plain_arguments(self, node: cst.CSTNode, config: str) -> bool:
        """`node` names a project dataclass (the run's index) deriving from `TrainingArguments` and not from a TRL
        config, whose local classes define no method and declare only fields the TRL config `config` has on every
        release from the target on (cttmayi/AIDemo's `TrainTrainingArguments`, which redeclares `num_train_epochs`,
        `save_strategy`, ... with its own defaults): TRL 1.x SFTTrainer rebuilds such an object as `SFTConfig(**args.
        to_dict())` losing nothing, and `compat.trl.trainer_config` builds the config from it the same way, with
        the moved keywords (it raises on a field the config lacks)."""
        if self.local is None:
            return False
        for n in sorted(self.qnames(node)):
            cls = self.local.find_in(self.path, n)
            if cls is None or self.local.base_in(cls.qname, _TRAINING_ARGS) is None \
                    or self.local.base_in(cls.qname, _CONFIG_PATHS) is not None:
                continue
            classes, outside = self.local.lineage(cls.qname)
            if any(c.methods or c.opaque or not c.dataclass for c in classes) or not set(outside) <= _TRAINING_ARGS:
                return False
            own = {f for c in classes for f in c.fields}
            return all(own <= set(fields) for _, fields in _target_config_fields(self.target, config))
        return False

    def _annotated_factory(self, assigned: cst.BaseExpression, config: str) -> bool:
        """`assigned` calls a function or method of this module (`make_args()`, `self._training_args()`) each of
        whose definitions by that name is annotated to return `TrainingArguments` or the trainer's config `config`
        (`-> TrainingArguments`): what it returns is decided there, or in an override elsewhere, and
        `compat.trl.trainer_config` checks the object it gets."""
        if not isinstance(assigned, cst.Call) or self._module is None:
            return False
        func = assigned.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in ("self", "cls"):
            name = func.attr.value
        elif isinstance(func, cst.Name):
            name = func.value
        else:
            return False
        defs: list[cst.FunctionDef] = []

        class _Defs(cst.CSTVisitor):
            def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
                if node.name.value == name:
                    defs.append(node)

        self._module.visit(_Defs())
        return bool(defs) and all(d.returns is not None and self._args_class(d.returns.annotation, config)
                                  for d in defs)

    def _factory_config(self, assigned: cst.BaseExpression, trainer_call: cst.Call) -> cst.Call | None:
        """`args = make_args(...)`: the config call that `make_args` returns, when it is a function defined once at
        the module's top level above the trainer call, its name appears nowhere else in the module but in this call
        (no other caller gets the switched class unnoticed), and its only `return` (outside nested functions and
        classes) gives a config call, or a name the function binds once, to a config call."""
        if not isinstance(assigned, cst.Call) or not isinstance(assigned.func, cst.Name) or self._module is None:
            return None
        name = assigned.func.value
        defs = [s for s in self._module.body if isinstance(s, cst.FunctionDef) and s.name.value == name]
        if len(defs) != 1:
            return None
        fn = defs[0]
        uses: list[cst.Name] = []
        returns: list[cst.Return] = []

        class _Walk(cst.CSTVisitor):
            def visit_Name(self, node: cst.Name) -> None:
                if node.value == name:
                    uses.append(node)

        class _Returns(FunctionBodyVisitor):
            def visit_Return(self, node: cst.Return) -> None:
                returns.append(node)

        self._module.visit(_Walk())
        fn.visit(_Returns(fn))
        if len(uses) != 2 or not any(u is fn.name for u in uses) or not any(u is assigned.func for u in uses):
            return None
        if len(returns) != 1:
            return None
        returned = returns[0].value
        if isinstance(returned, cst.Name):
            # `training_args = TrainingArguments(...)` then `return training_args` (LvBaolu/Mixtral_V2's
            # get_train_args): the name's only binding in the function
            returned = _only_binding(fn, returned.value)
        if not isinstance(returned, cst.Call) or self._config_kind(returned.func) is None:
            return None
        position = self.lazy_metadata(PositionProvider, fn).start.line  # type: ignore[attr-defined]
        if position >= self.lazy_metadata(PositionProvider, trainer_call).start.line:  # type: ignore[attr-defined]
            return None  # the config call must be rewritten before the trainer call is
        return returned

    def _config_kind(self, func: cst.BaseExpression) -> str | None:
        q = self.qnames(func)
        if q & _TRAINING_ARGS:
            return "TrainingArguments"
        found = next((_CONFIG_PATHS[n] for n in sorted(q) if n in _CONFIG_PATHS), None)
        if found is None and self.local is not None:
            # a repository class of another module (the run's index), or of this one (vlf-silkie/VLFeedback's `class
            # TrainingArguments(transformers.TrainingArguments)` beside its DPO script), deriving from a TRL config,
            # with the dataclass constructor it inherits (no `__init__` of its own on the way): it takes the config's
            # fields
            for n in self._own_class_names(func):
                base = self.local.base_in(n, _CONFIG_PATHS)
                if base is not None and not self.local.defines(n, "__init__"):
                    return _CONFIG_PATHS[base]
                # a TrainingArguments subclass `local-config-base` bases on the TRL config in its own module
                rebased = config_base(self.local, n, self.target)
                if rebased is not None:
                    return rebased.config
        return found

    def _local_parser(self, func: cst.BaseExpression, method: str) -> bool:
        """`func` is a repository class deriving from HfArgumentParser / TrlParser, and `method` is a library parse
        method it does not override, or a method of its own built on them (`LocalClasses.delegates`: alignment-
        handbook's `H4ArgumentParser.parse`): either returns the dataclasses in the order of the class tuple."""
        return self.local is not None and any(
            self.local.base_in(n, _PARSER) is not None
            and (self.local.delegates(n, method) if self.local.defines(n, method) else method in _PARSE_METHODS)
            for n in self.qnames(func))

    def _local_arguments_hint(self, plan: _Plan, element: cst.CSTNode | None) -> str | None:
        """The marker for `args` parsed into a repository class that derives from `TrainingArguments` but not from
        the trainer's TRL config: TRL 1.x SFTTrainer rebuilds such an object as `SFTConfig(**args.to_dict())` (its
        own extra fields are a TypeError there, attributes set on it are lost) and DPOTrainer reads config fields
        from it, so nothing can be set on it in this file."""
        if element is None or self.local is None or not plan.moves:
            return None
        config = _CONFIG[plan.trainer]
        for n in sorted(self.qnames(element)):
            if self.local.base_in(n, _TRAINING_ARGS) is None or self.local.base_in(n, _CONFIG_PATHS) is not None:
                continue
            found = self.local.find(n)
            keys = ", ".join(f"{kw}=" for _, kw, _ in plan.moves)
            why = (f"rebuilds as {config}(**args.to_dict()) (its own fields fail, attributes are lost)"
                   if plan.trainer not in _NEEDS_CONFIG else f"reads {config} fields from")
            return (f"base {found.qname if found else n} on trl.{config}: a TrainingArguments subclass, which TRL "
                    f"1.x {plan.trainer} {why}; then set {keys} on it ({plan.trainer} takes none of them since "
                    "TRL 0.13)")
        return None

    def _single_assignment(self, name: cst.Name) -> tuple[cst.CSTNode, cst.BaseExpression] | None:
        """(target, value) of the only assignment of `name` visible here, when it is a plain `x = ...` / unpack."""
        scope = self.get_metadata(ScopeProvider, name, None)
        if scope is None:
            return None
        assignments = [a for a in scope[name.value] if hasattr(a, "node")]
        if len(assignments) != 1:
            return None
        node = assignments[0].node
        parent = self.get_metadata(ParentNodeProvider, node, None)
        while parent is not None and not isinstance(parent, (cst.Assign, cst.BaseSmallStatement, cst.BaseStatement)):
            parent = self.get_metadata(ParentNodeProvider, parent, None)
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            return parent.targets[0].target, parent.value
        return None

    def _reaching_assignment(self, name: cst.Name, call: cst.Call) -> tuple[cst.CSTNode, cst.BaseExpression] | None:
        """(target, value) of the binding of `name` that every run reaching `call` made last, for a name bound more
        than once (`args = parser.parse_args()` ... `args = TrainingArguments(...)` ... `SFTTrainer(args=args)`):
        the last binding above the call is a plain `name = ...` statement, and the call sits in a later statement of
        the same block (nested or not, in no other function), so that statement ran before the call whatever branch
        came between; no other binding shares its line, and no loop between the block and the call holds a binding
        after the call (its next round would see that one)."""
        scope = self.get_metadata(ScopeProvider, name, None)
        if scope is None:
            return None
        at = self.lazy_metadata(PositionProvider, call).start.line  # type: ignore[attr-defined]
        lines: list[tuple[int, cst.CSTNode]] = []
        for a in scope[name.value]:
            if not hasattr(a, "node"):
                continue  # a builtin
            pos = self.lazy_metadata(PositionProvider, a.node, None)
            if pos is None:
                return None
            lines.append((pos.start.line, a.node))
        above = [(line, node) for line, node in lines if line < at]
        if not above:
            return None
        last = max(line for line, _ in above)
        nodes = [node for line, node in above if line == last]
        if len(nodes) != 1:
            return None
        target = self.get_metadata(ParentNodeProvider, nodes[0], None)
        assign = self.get_metadata(ParentNodeProvider, target, None) if isinstance(target, cst.AssignTarget) else None
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and assign.targets[0].target is nodes[0]):
            return None
        statement = self.get_metadata(ParentNodeProvider, assign, None)
        block = self.get_metadata(ParentNodeProvider, statement, None) if statement is not None else None
        if not isinstance(statement, cst.SimpleStatementLine) or not isinstance(block, (cst.IndentedBlock, cst.Module)):
            return None
        later = any(line > at for line, _ in lines)
        node: cst.CSTNode = call
        parent = self.get_metadata(ParentNodeProvider, node, None)
        while parent is not block:
            if parent is None or isinstance(parent, (cst.FunctionDef, cst.Lambda, cst.ClassDef)) \
                    or (later and isinstance(parent, (cst.For, cst.While))):
                return None
            node, parent = parent, self.get_metadata(ParentNodeProvider, parent, None)
        statements = list(block.body)
        if not any(x is statement for x in statements[:next(i for i, x in enumerate(statements) if x is node)]):
            return None
        return assign.targets[0].target, assign.value

    def _bound_before(self, value: cst.BaseExpression, line: int) -> bool:
        """True when every name `value` reads is bound (or is a builtin/import) before `line`."""
        ok = True

        class _Names(cst.CSTVisitor):
            def visit_Attribute(self, node: cst.Attribute) -> bool:
                node.value.visit(self)
                return False

            def visit_Name(inner, node: cst.Name) -> None:
                nonlocal ok
                scope = self.get_metadata(ScopeProvider, node, None)
                if scope is None:
                    ok = False
                    return
                for a in scope[node.value]:
                    if not hasattr(a, "node"):
                        continue  # builtin
                    pos = self.lazy_metadata(PositionProvider, a.node, None)
                    if pos is None or pos.start.line >= line:
                        ok = False

        if literal_value(value, _MISSING) is not _MISSING:
            return True
        value.visit(_Names())
        return ok

    def _single_attribute_assignment(self, attr: cst.Attribute, call: cst.Call
                                     ) -> tuple[cst.CSTNode, cst.BaseExpression] | None:
        """(target, value) of `self.x = ...` when `args=self.x` reads the only binding of any `.x` in the module, made
        by a plain assignment earlier in the same function as the trainer call."""
        if not isinstance(attr.value, cst.Name):
            return None
        function = self._enclosing(call, cst.FunctionDef)
        if function is None:
            return None
        finder = _AttributeBindings(attr.attr.value)
        self._module.visit(finder)
        if len(finder.bindings) != 1:
            return None
        assign = finder.bindings[0]
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1
                and code(assign.targets[0].target) == code(attr)
                and self._enclosing(assign, cst.FunctionDef) is function):
            return None
        before = self.lazy_metadata(PositionProvider, assign).start.line  # type: ignore[attr-defined]
        if before >= self.lazy_metadata(PositionProvider, call).start.line:  # type: ignore[attr-defined]
            return None
        return assign.targets[0].target, assign.value

    def _enclosing(self, node: cst.CSTNode, kind: type) -> cst.CSTNode | None:
        parent = self.get_metadata(ParentNodeProvider, node, None)
        while parent is not None and not isinstance(parent, kind):
            parent = self.get_metadata(ParentNodeProvider, parent, None)
        return parent

    def visit_Module(self, node: cst.Module) -> None:
        self._module = node

    def _parsed_class(self, assigned: cst.BaseExpression, target: cst.CSTNode, name: str, loose: bool = False
                      ) -> cst.CSTNode | None:
        """The class element of `HfArgumentParser((..., TrainingArguments))` (or `TrlParser`, or a repository
        subclass of either, `_local_parser`) whose parse bound `name`: the parser a name bound once, or built in the
        same expression (`HfArgumentParser([...]).parse_args_into_dataclasses()`, HeegyuKim/tuna). `loose`: any
        method of any parser built from a class tuple (for a marker's text, never for a rewrite)."""
        if not (isinstance(assigned, cst.Call) and isinstance(assigned.func, cst.Attribute)
                and isinstance(assigned.func.value, (cst.Name, cst.Call))):
            return None
        if not isinstance(target, (cst.Tuple, cst.List)):
            return None
        names = [e.value.value if isinstance(e.value, cst.Name) else None for e in target.elements]
        if name not in names:
            return None
        index = names.index(name)
        receiver = assigned.func.value
        if isinstance(receiver, cst.Call):
            built: cst.BaseExpression = receiver
        else:
            parser = self._single_assignment(receiver)
            if parser is None:
                return None
            built = parser[1]
        if not isinstance(built, cst.Call):
            return None
        method = assigned.func.attr.value
        if not (loose or (method in _PARSE_METHODS and self.qnames(built.func) & _PARSER)
                or self._local_parser(built.func, method)):
            return None
        if not built.args:
            return None
        classes = built.args[0].value
        if not isinstance(classes, (cst.Tuple, cst.List)) or len(classes.elements) != len(names):
            return None
        return classes.elements[index].value


def parsed_defaults_message(config: str) -> str:
    """The marker of a parser's TrainingArguments switched to `config`: what the command line no longer gets."""
    return (f"TrainingArguments -> {config}: its defaults differ ({', '.join(_TA_DEFAULTS)}); pass them if you "
            "relied on them")


def _is_signature_default(trainer: str, keyword: str, value: cst.BaseExpression) -> bool:
    """True when the 0.x trainer keyword is passed as a literal equal (same type) to its signature default."""
    defaults = _SIGNATURE_DEFAULTS[trainer]
    if keyword not in defaults:
        return False
    found = literal_value(value, _MISSING)
    return found is not _MISSING and type(found) is type(defaults[keyword]) and found == defaults[keyword]


class _AttributeBindings(cst.CSTVisitor):
    """Every statement that binds an attribute named `name` (`a.name = ...`, `a.name += ...`, `a.name: T = ...`,
    `for a.name in`, `with ... as a.name`, a `del`), on any object."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name, self.bindings = name, []

    def _hit(self, target: cst.CSTNode) -> bool:
        found = False

        class _Find(cst.CSTVisitor):
            def visit_Attribute(inner, node: cst.Attribute) -> None:
                nonlocal found
                found = found or node.attr.value == self.name

        target.visit(_Find())
        return found

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.Del)):
            targets = [node.target]
        elif isinstance(node, cst.AsName):
            targets = [node.name]
        else:
            targets = []
        if any(self._hit(t) for t in targets):
            self.bindings.append(node)
        return True


def _literal(value: cst.BaseExpression) -> bool:
    """A value that means the same anywhere in the module (`"text"`, `4096`, `-1`, `None`, `(1, 2)`): it can move
    into another function's call."""
    import ast

    try:
        ast.literal_eval(code(value).strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True


def _keywordize(trainer: str, call: cst.Call) -> list[cst.Arg] | None:
    """The call's args with 0.x positionals past the shared prefix turned into keywords; None when it has a star."""
    if any(a.star for a in call.args):
        return list(call.args) if all(a.keyword is not None or a.star for a in call.args[_SAME_PREFIX[trainer]:]) \
            else None
    out: list[cst.Arg] = []
    old = _OLD_PARAMS[trainer]
    for i, a in enumerate(call.args):
        if a.keyword is None and i >= _SAME_PREFIX[trainer]:
            if i >= len(old):
                return None
            out.append(a.with_changes(keyword=cst.Name(old[i]), equal=cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))))
        else:
            out.append(a)
    return out


def _merged_with_splats(call: cst.Call, defaults: list[cst.Arg], moved: list[cst.Arg]) -> cst.Call:
    """`TrainingArguments(**vars(opts))` switched to a config: the keys of `**vars(opts)` are unknown here, so neither
    the TrainingArguments defaults written out nor the moved trainer keywords may be keywords beside it (a key it also
    holds is a `TypeError: got multiple values`, zucchini-nlp/RLHF-GPT2). One mapping keeps 0.x's order of
    precedence: the defaults first (what TrainingArguments gave when the splat did not set them), then the call's own
    `**` arguments, then the moved keywords (TRL 0.x set them on the config after it was built)."""
    def entry(arg: cst.Arg) -> cst.BaseDictElement:
        if arg.star == "**":
            return cst.StarredDictElement(arg.value)
        return cst.DictElement(cst.SimpleString(repr(arg.keyword.value).replace("'", '"')), arg.value)  # type: ignore[union-attr]

    splats = [a for a in call.args if a.star == "**"]
    if not defaults and not moved:
        return call
    kept = [a for a in call.args if a.star != "**"]
    merged = cst.Dict([entry(a) for a in [*defaults, *splats, *moved]])
    return replace_args(call, [*kept, cst.Arg(merged, star="**")])


def _explode_nested(call: cst.Call) -> cst.Call:
    """One argument per line, one level deeper than the trainer call's own arguments (a call nested in a call)."""
    def ws(last: str) -> cst.ParenthesizedWhitespace:
        return cst.ParenthesizedWhitespace(first_line=cst.TrailingWhitespace(), empty_lines=[], indent=True,
                                           last_line=cst.SimpleWhitespace(last))
    flat = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in call.args]
    return explode_call(call.with_changes(args=flat), opening=ws("        "), closing=ws("    "))


class _UnusedName(cst.CSTVisitor):
    """Counts the uses of a name outside import statements."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name, self.uses = name, 0

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_Name(self, node: cst.Name) -> None:
        self.uses += node.value == self.name


class _DropImport(cst.CSTTransformer):
    """Drops `name` from `from transformers import ...` (the rule replaced its last use)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    def leave_ImportFrom(self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom):
        if updated_node.relative or isinstance(updated_node.names, cst.ImportStar) or \
                code(updated_node.module or cst.Name("")) != "transformers":
            return updated_node
        keep = [a for a in updated_node.names if not (code(a.name) == self.name and a.asname is None)]
        if len(keep) == len(updated_node.names):
            return updated_node
        if not keep:
            return cst.RemoveFromParent()
        keep[-1] = keep[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated_node.with_changes(names=keep)


class _Transformer(MigrationTransformer):  # positions through `self.position()`, resolved on first use

    def __init__(self, rule: PythonMigration, ctx: RuleContext, plans: list[_Plan],
                 super_calls: dict[int, tuple[str, list[str], list[str], bool]] | None = None) -> None:
        super().__init__(rule, ctx)
        self.super_calls = super_calls or {}
        self.by_call = {id(p.call): p for p in plans}
        self.by_config = {id(p.config_call): p for p in plans if p.config_call is not None}
        self.by_parser = {id(p.parser_class): p for p in plans if p.parser_class is not None}
        self.needed: list[tuple[str, str]] = []
        self.before_stmt: dict[int, list[cst.BaseStatement]] = {}
        self.words: set[str] = set()  # the module's words (set by the rule): names a helper call may not take
        self.imported: set[tuple[str, str]] = set()  # its top-level `from mod import name` bindings

    # the config call (inline or assigned): append the moved keywords
    def _edit_config(self, plan: _Plan, original: cst.Call, updated: cst.Call) -> cst.Call:
        config = _CONFIG[plan.trainer]
        have = {a.keyword.value: a for a in updated.args if a.keyword is not None}
        late = {kw for _, kw, _ in plan.late}
        new_args = list(updated.args)
        for fld, kw, value in plan.moves:
            if kw in late:
                continue
            if fld in have:
                if code(have[fld].value).strip() == code(value).strip():
                    plan.drop.add(kw)
                else:
                    self.todo(original, f"{plan.trainer}({kw}=) differs from {config}({fld}=): "
                                        "in TRL 0.x the trainer's value won; keep one")
                continue
            new_args.append(make_kwarg(fld, value))
            plan.drop.add(kw)
        func = updated.func
        defaults: list[cst.Arg] = []
        if plan.switch:
            written = []
            for key, default in _TA_DEFAULTS.items():
                if key not in have:
                    defaults.append(make_kwarg(key, parse_expr(default)))
                    written.append(f"{key}={default}")
            func = cst.Name(config)
            self.needed.append(("trl", config))
            self.note(original, f"TrainingArguments -> {config} for {plan.trainer}; TrainingArguments defaults the "
                                f"config changes written out: {', '.join(written) or 'none'}")
        if any(a.star == "**" for a in updated.args):
            return _merged_with_splats(updated.with_changes(func=func), defaults, new_args[len(updated.args):])
        return replace_args(updated.with_changes(func=func), new_args + defaults)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if id(original_node) in self.super_calls:
            trainer, keys, shifted, named = self.super_calls[id(original_node)]
            if named:
                args = _keywordize(trainer, updated_node)
                if args is not None:
                    updated_node = replace_args(updated_node, args)
                    self.note(original_node, f"{trainer}.__init__'s TRL 0.x positionals passed by keyword")
            if shifted:
                self.todo(original_node, f"{trainer}.__init__ gets {len(shifted)} positionals in the TRL 0.x order "
                                         f"({shifted[0]}, ...): pass them by keyword, config fields on "
                                         f"{_CONFIG[trainer]} (args)")
            if keys:
                self.todo(original_node, f"{trainer}.__init__ takes no {', '.join(k + '=' for k in keys)} since TRL "
                                         f"0.13: set them on {_CONFIG[trainer]} (args)")
            return updated_node
        plan = self.by_config.get(id(original_node))
        if plan is not None and not plan.inline:
            updated_node = self._edit_config(plan, original_node, updated_node)
        plan = self.by_call.get(id(original_node))
        if plan is None:
            return updated_node
        return self._edit_trainer(plan, original_node, updated_node)

    def _edit_trainer(self, plan: _Plan, original: cst.Call, updated: cst.Call) -> cst.Call:
        config = _CONFIG[plan.trainer]
        args = _keywordize(plan.trainer, updated)
        if args is None:
            return updated
        # A keyword no target config has is a TypeError on the target: dropped (marked, with what to do instead)
        # when its value does nothing but produce a value, else kept and marked.
        gone: set[str] = set()
        for a in args:
            if a.keyword is not None and a.keyword.value in _GONE[plan.trainer]:
                kw = a.keyword.value
                if side_effect_free(a.value):
                    gone.add(kw)
                    self.todo(original, f"{plan.trainer}({kw}=) dropped (it was {code(a.value)}): "
                                        f"{_GONE[plan.trainer][kw]}")
                else:
                    self.todo(original, f"{plan.trainer}({kw}=): {_GONE[plan.trainer][kw]}")
        if plan.defaulted:
            gone |= plan.defaulted
            self.note(original, f"{plan.trainer}({', '.join(k + '=' for k in sorted(plan.defaulted))}) dropped: "
                                "passed with its TRL 0.x default, it did what leaving it out does")
        # the inline config's argument, found by its position in the call as written (before keywords are dropped)
        config_arg = args[next(i for i, a in enumerate(original.args) if a.value is plan.config_call)] \
            if plan.inline else None
        if gone:
            args = [a for a in args if a.keyword is None or a.keyword.value not in gone]
        late_ok = bool(self._stmt_stack) and isinstance(self._stmt_stack[-1], cst.SimpleStatementLine)
        if plan.moves and ((plan.config_call is None and not plan.create and plan.parser_class is None
                            and not plan.parsed)
                           or (plan.late and not late_ok)):
            wrapped = self._wrap_unseen_args(plan, original, args) if not plan.late else None
            if wrapped is not None:
                return replace_args(updated, wrapped)
            keys = ", ".join(f"{kw}=" for _, kw, _ in plan.moves)
            self.todo(original, plan.hint or f"move {keys} to args, a trl.{config} ({plan.trainer} takes none of "
                                             "them since TRL 0.13)")
            unchanged = len(args) == len(updated.args) and all(a is b for a, b in zip(args, updated.args))
            return updated if unchanged else replace_args(updated, args)
        if plan.inline:
            pos = next(i for i, a in enumerate(args) if a is config_arg)
            inner = self._edit_config(plan, plan.config_call, args[pos].value)
            if "\n" in code(inner) and "\n" not in code(plan.config_call):
                inner = _explode_nested(inner)
            args[pos] = args[pos].with_changes(value=inner)
        if plan.create:
            kws = [make_kwarg("output_dir", parse_expr(_OUTPUT_DIR))] + [make_kwarg(f, v) for f, _, v in plan.moves]
            kws += [make_kwarg(k, parse_expr(v)) for k, v in _TA_DEFAULTS.items()]
            created = replace_args(cst.Call(func=cst.Name(config)), kws)
            args.append(make_kwarg("args", _explode_nested(created) if "\n" in code(created) else created))
            self.needed.append(("trl", config))
            plan.drop |= {kw for _, kw, _ in plan.moves}
            self.note(original, f'{plan.trainer} keywords moved into a new args={config}(output_dir="tmp_trainer")')
        if plan.late:
            # `beta=training_args.beta` on the trainer only repeated the config's own field: nothing to assign
            stmts = [cst.parse_statement(f"{plan.attr_target}.{fld} = {code(v)}\n") for fld, _, v in plan.late
                     if code(v).strip() != f"{plan.attr_target}.{fld}"]
            self.before_stmt.setdefault(id(self._stmt_stack[-1]), []).extend(stmts)
            plan.drop |= {kw for _, kw, _ in plan.late}
        keep = [a for a in args if a.keyword is None or a.keyword.value not in plan.drop]
        if len(keep) != len(args):
            moved = ", ".join(f"{a.keyword.value}=" for a in args if a.keyword is not None
                              and a.keyword.value in plan.drop)
            self.note(original, f"{plan.trainer}({moved}) moved into {config}")
        return replace_args(updated, keep)

    def _wrap_unseen_args(self, plan: _Plan, original: cst.Call, args: list[cst.Arg]) -> list[cst.Arg] | None:
        """`args=training_args` the rule cannot see built (a parameter, another module's object): the moved keywords
        go to `args=trainer_config(SFTConfig, training_args, max_length=...)` (`compat.trl`), the config TRL 0.9 -
        0.12 built from that object and the keywords; None (the call is marked) when `args=` is not a parameter
        without annotation, an attribute the file never assigns or a call (`plan.unseen`), a moved value may have
        side effects or is written before an `args=` call, the plan has a hint of its own (a local config class to
        rebase), or the file already uses the name `trainer_config` or a config name not TRL's."""
        config = _CONFIG[plan.trainer]
        pos = next((i for i, a in enumerate(args) if a.keyword is not None and a.keyword.value == "args"), None)
        if not plan.unseen or plan.hint is not None or pos is None:
            return None
        if not all(side_effect_free(v) for _, _, v in plan.moves):
            return None
        moved = {kw for _, kw, _ in plan.moves}
        if not side_effect_free(args[pos].value) and any(
                a.keyword is not None and a.keyword.value in moved for a in args[:pos]):
            # `args=make()` with a moved keyword written before it: inside trainer_config its value would be read
            # after the call ran (which may change what it reads); written after it, the order is the call's own
            return None
        if "trainer_config" in self.words or (config in self.words and ("trl", config) not in self.imported):
            return None
        call = cst.Call(func=cst.Name("trainer_config"), args=[
            cst.Arg(cst.Name(config)), cst.Arg(args[pos].value), *(make_kwarg(f, v) for f, _, v in plan.moves)])
        call = replace_args(call, list(call.args))
        if len(code(call)) > 60:
            call = _explode_nested(call)
        self.needed += [("trl", config), ("compat.trl", "trainer_config")]
        self.note(original, f"{plan.trainer}({', '.join(k + '=' for _, k, _ in plan.moves)}) moved into "
                            f"args=trainer_config({config}, {code(args[pos].value)}, ...): the config TRL 0.9 - 0.12 "
                            "built from that object and the keywords")
        return [a.with_changes(value=call) if i == pos else a for i, a in enumerate(args)
                if a.keyword is None or a.keyword.value not in moved]

    def leave_Element(self, original_node: cst.Element, updated_node: cst.Element) -> cst.Element:
        plan = self.by_parser.get(id(original_node.value))
        if plan is None:
            return updated_node
        config = _CONFIG[plan.trainer]
        self.needed.append(("trl", config))
        self.todo(original_node, parsed_defaults_message(config))
        return updated_node.with_changes(value=cst.Name(config))

    def leave_SimpleStatementLine(self, original_node, updated_node):  # type: ignore[override]
        extra = self.before_stmt.pop(id(original_node), None)
        if not extra:
            return updated_node
        extra[0] = extra[0].with_changes(leading_lines=updated_node.leading_lines)
        self.note(original_node, "trainer keywords assigned to the parsed/late config before the trainer is built")
        # the markers of the trainer statement stay on it (the base class would put them on the first statement)
        stmt = add_todo_lines(updated_node.with_changes(leading_lines=[]), self._pending.pop(id(original_node), []))
        return cst.FlattenSentinel([*extra, stmt])

    def leave_Assign(self, original_node, updated_node):  # type: ignore[override]
        return updated_node


class TrainerKwargsToConfig(PythonMigration):
    summary = "DPO/SFT/Reward trainer keywords (beta=, max_seq_length=, packing=, ...) -> their config; " \
              "TrainingArguments -> the trainer's config"
    triggers = ("DPOTrainer", "SFTTrainer", "RewardTrainer")
    requires = ("trl",)

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        text = ctx.module_code(wrapper)
        planner = _Planner(ctx.options.local_classes, ctx.options.target_trl, text, ctx.path)
        wrapper.visit(planner)
        if not planner.plans and not planner.super_calls:
            return wrapper.module
        t = _Transformer(self, ctx, planner.plans, planner.super_calls)
        t.words = code_words(text)
        t.imported = top_level_imports(wrapper.module)
        module = wrapper.visit(t)
        if t.needed:
            module = ensure_imports(module, t.needed)
        if any(p.switch or p.parser_class is not None for p in planner.plans):
            counter = _UnusedName("TrainingArguments")
            module.visit(counter)
            if not counter.uses:
                module = module.visit(_DropImport("TrainingArguments"))
        return module if (t.changed or t.needed) else wrapper.module


MIGRATION = TrainerKwargsToConfig()


def _only_binding(fn: cst.FunctionDef, name: str) -> cst.BaseExpression | None:
    """The value of `name = <value>`, the one binding of `name` in function `fn` (outside nested functions, classes
    and lambdas; a parameter, a `for` / `with` / augmented target, a tuple target or a second assignment of the name:
    None)."""
    values: list[cst.BaseExpression | None] = []

    class _Bindings(FunctionBodyVisitor):
        def visit_Param(self, node: cst.Param) -> None:
            if node.name.value == name:
                values.append(None)

        def visit_Assign(self, node: cst.Assign) -> None:
            for t in node.targets:
                if isinstance(t.target, cst.Name) and t.target.value == name:
                    values.append(node.value if len(node.targets) == 1 else None)

        def _other(self, target: cst.BaseExpression) -> None:
            if any(isinstance(n, cst.Name) and n.value == name for n in _names_in(target)):
                values.append(None)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            self._other(node.target)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            if isinstance(node.target, cst.Name) and node.target.value == name:
                values.append(node.value)

        def visit_For(self, node: cst.For) -> None:
            self._other(node.target)

        def visit_WithItem(self, node: cst.WithItem) -> None:
            if node.asname is not None:
                self._other(node.asname.name)

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            if isinstance(node.target, (cst.Tuple, cst.List)):  # `a.b = ...` / `a[k] = ...` bind no name
                self._other(node.target)

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            self._other(node.target)

    fn.visit(_Bindings(fn))
    return values[0] if len(values) == 1 else None


def _names_in(node: cst.CSTNode) -> list[cst.Name]:
    found: list[cst.Name] = []

    class _Names(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            found.append(n)

    node.visit(_Names())
    return found
