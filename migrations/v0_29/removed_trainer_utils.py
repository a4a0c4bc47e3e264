"""removed-trainer-utils: helpers TRL 0.29 dropped from `trl.trainer.utils` / `trl`.

Read from the 0.28.0 and 0.29.0 wheels:
* `cap_exp`, `get_exp_cap` (small tensor helpers) -> `compat.trl` copies of the 0.28 bodies;
* `FDivergenceConstants` (two class constants, the same in 0.9 - 0.28) -> the `compat.trl` copy;
* `FDivergenceType.X.value` -> its string (`"reverse_kl"`, ...) when every use of the enum in the file is one;
* `RunningMoments` (a running mean/std over an Accelerator) and `get_global_statistics` (the 0.28 bodies), the PPO
  (v1) KL controllers `AdaptiveKLController` / `FixedKLController` (gone in 0.14, the 0.13 classes; also imported
  through `trl.trainer` and `trl.trainer.ppo_trainer`) and the PPO-era trainer base `trl.trainer.BaseTrainer`
  (`trl.trainer.base`, gone in 0.14, the 0.13 class) -> the `compat.trl` copies (`compat._trainer_utils`);
* other uses of `FDivergenceType` (DPO's f-divergence enum, a plain `Enum`: a copy would not equal the strings
  `DPOConfig.f_divergence_type` takes now) -> marked;
* the PPOv2 / RLOO generation helpers `batch_generation`, `generate`, `forward`, `truncate_response`,
  `print_rich_table` (in `trl.experimental.ppo` from 0.27 to 1.12, gone in 1.13; the same bodies in 0.26.2 and 1.12.0)
  `PeftSavingCallback` (gone in 0.7.5, the 0.7.4 body), `trl_sanitze_kwargs_for_tagging` (gone in 0.14, the 0.13
  body) and `DPODataCollatorWithPadding` (0.27 moved it to
  `trl.experimental.utils` without its `label_pad_token_id` field; the 0.26.2 class) -> the `compat.trl` copies
  (`compat._trainer_utils`); TRL 0.7's DPODataCollatorWithPadding was another class (built from the tokenizer, it
  tokenized the rows: `tokenize_batch_element`, `collate`), so a module using that API (a call passing its
  tokenizer-era fields, a subclass reading them) keeps its import, marked (`convertible`);
* `exact_div` (gone in 0.27 from `trl.trainer.utils`, in 1.13 from `trl.experimental.ppo`: the 1.12 function, which
  also runs 0.6 - 0.8's `exact_div(a, b, a_str, b_str, msg)` calls as 0.8 did) and `compute_accuracy` (the reward /
  PRM metric, gone in 0.27 from `trl.trainer.utils`, in 1.14 from `trl.experimental.prm`: the 1.13 function), also
  imported through `trl.trainer`, `trl.trainer.reward_trainer`, `trl.trainer.ppo_config`, ... (the atlas)
  -> the `compat.trl` copies (`compat._trainer_utils`);
* `INVALID_LOGPROB` (the PPOv2 / RLOO padding log-prob, 1.0 in every release from 0.9.2 to 1.12.0; the trainer
  modules that defined or re-exported it, the atlas) -> the `compat.trl` constant;
* `OnlineTrainerState` (the PPOv2 / RLOO trainers' `TrainerState` with an `episode` counter, the same dataclass in
  `trl.trainer.utils` 0.10 - 0.26, the trainer modules that re-exported it and `trl.experimental.ppo.ppo_trainer`
  until 1.12; the atlas) -> the `compat.trl` copy;
* `OnPolicyConfig` (the base config of the PPOv2 / RLOO v1 trainers, 0.10 - 0.26; the modules that re-exported it)
  -> the `compat.trl` copy, whose fields are those of every release with their unchanged defaults;
* `neftune_post_forward_hook` (NEFTune's embedding hook, `trl.trainer.utils` and `trl.trainer.sft_trainer` 0.7.3 -
  0.11.4, the same code) -> the `compat.trl` copy;
* `RewardDataCollatorWithPadding` (gone in 0.27, no successor taking its `input_ids_chosen` columns; also imported
  through `trl.trainer.reward_trainer`) -> the `compat.trl` copy of the 0.8.6 - 0.11.4 class (`max_length=` kept);
* `decode_and_strip_padding` (0.11 - 0.24, no successor; also exported by `trl.trainer.reward_trainer`) -> the
  `compat.trl` copy of the 0.19.1 function;
* the other public helpers `trl.trainer.utils` lost between 0.27 and 1.0 (found with the API atlas:
  `migrations.atlas`, names of 0.8 - 0.24 absent on 1.16): those TRL moved to `trl.experimental.utils` (or `trl`)
  with the same parameters on 1.13 and 1.16 are moved there (`first_true_indices`, `get_reward`, `pad_to_length`,
  `DataCollatorForChatML`, `RichProgressCallback`, ...); `truncate_right`, whose `stop_token_id` became
  `stop_token_ids` (a list) in `trl.experimental.utils`, -> the `compat.trl` copy of the 0.26.2 function (the same in
  1.13); the rest (no successor, or another class of the same name) are marked.
"""

from __future__ import annotations

import ast
import dataclasses
import re

import libcst as cst
from libcst.metadata import QualifiedNameProvider

from migrations.base import Finding, RuleContext
from migrations.kinds import grammar
from migrations.kinds.imports import drop_unused_import
from migrations.kinds.symbols import Gone, Moved, SymbolMigration

_NOTE = "removed from TRL in 0.29; trl-compat keeps the 0.28 function (the project now needs trl-compat)"
_FDIV = "removed in TRL 0.29: pass the f-divergence as a string, e.g. f_divergence_type=\"reverse_kl\""
_FDIV_PATHS = ("trl.FDivergenceType", "trl.trainer.FDivergenceType", "trl.trainer.dpo_config.FDivergenceType")
#: FDivergenceType's members and their values, the same in every release that had the enum (0.9 - 0.28; wheels)
FDIV_VALUES = {"REVERSE_KL": "reverse_kl", "JS_DIVERGENCE": "js_divergence", "ALPHA_DIVERGENCE": "alpha_divergence"}


# moved by TRL with the same parameters on 1.13 and 1.16 (atlas signatures): name -> new module
_MOVED = {
    "DataCollatorForChatML": "trl.experimental.utils", "add_bos_token_if_needed": "trl.experimental.utils",
    "add_eos_token_if_needed": "trl.experimental.utils", "empty_cache": "trl.experimental.utils",
    "first_true_indices": "trl.experimental.utils", "get_reward": "trl.experimental.utils",
    "pad_to_length": "trl.experimental.utils", "peft_module_casting_to_bf16": "trl.experimental.utils",
    "RichProgressCallback": "trl", "is_unsloth_available": "trl.import_utils",
}
_NO_SUCCESSOR = ("PerPromptStatTracker", "flush_right")
#: the PPO (v1) bookkeeping kept by trl-compat (compat._trainer_utils, tested against the wheels): name -> why, and the
#: modules that exported it (atlas: `trl.trainer` and `trl.trainer.ppo_trainer` re-exported them)
_PPO_COPIES = {
    "AdaptiveKLController": ("removed from TRL in 0.14; trl-compat keeps the 0.13 class",
                             ("trl.trainer.utils", "trl.trainer", "trl.trainer.ppo_trainer")),
    "FixedKLController": ("removed from TRL in 0.14; trl-compat keeps the 0.13 class",
                          ("trl.trainer.utils", "trl.trainer", "trl.trainer.ppo_trainer")),
    "RunningMoments": ("removed from TRL in 0.29; trl-compat keeps the 0.28 class",
                       ("trl.trainer.utils", "trl.trainer", "trl.trainer.ppo_trainer")),
    "get_global_statistics": ("removed from TRL in 0.29; trl-compat keeps the 0.28 function", ("trl.trainer.utils",)),
    # the PPO-era trainer base (0.4 - 0.13); not trl.trainer.base_trainer.BaseTrainer (0.24 - 0.29), another class
    "BaseTrainer": ("removed from TRL in 0.14; trl-compat keeps the 0.13 class", ("trl.trainer", "trl.trainer.base")),
}
#: two small helpers with no TRL successor, kept by trl-compat (compat._trainer_utils, tested against the wheels): name
#: -> why, and every module the atlas shows exporting it before TRL moved it to trl.experimental (0.26 / 0.27)
_HELPER_COPIES = {
    "exact_div": ("gone from trl.trainer.utils in TRL 0.27 (trl.experimental.ppo until 1.12); trl-compat keeps the "
                  "1.12 function, 0.6 - 0.8's call form included",
                  ("trl.trainer.utils", "trl.trainer.ppo_config", "trl.trainer.ppo_trainer", "trl.trainer.ppov2_trainer",
                   "trl.trainer.rloo_trainer", "trl.experimental.ppo.ppo_trainer")),
    # a constant, 1.0 in every release that had it (0.9.2 - 1.12.0): the log-prob written at padded positions
    "INVALID_LOGPROB": ("gone from trl.trainer.rloo_trainer in TRL 0.22 (trl.experimental.ppo until 1.12); trl-compat "
                        "keeps the constant (1.0 in every release)",
                        ("trl.trainer.ppov2_trainer", "trl.trainer.rloo_config", "trl.trainer.rloo_trainer",
                         "trl.trainer.ppo_trainer", "trl.experimental.ppo.ppo_trainer")),
    "compute_accuracy": ("gone from trl.trainer.utils in TRL 0.27 (trl.experimental.prm until 1.13); trl-compat "
                         "keeps the 1.13 function (tied reward pairs left out, as TRL does since 0.13)",
                         ("trl.trainer.utils", "trl.trainer", "trl.trainer.reward_trainer", "trl.trainer.prm_trainer")),
    # the PPOv2 / RLOO trainers' state, the same dataclass in every exporter (0.10.1 - 1.12.0)
    "OnlineTrainerState": ("gone from trl.trainer.utils in TRL 0.27 (trl.experimental.ppo until 1.12); trl-compat "
                           "keeps the 1.12 dataclass (a TrainerState with an episode counter)",
                           ("trl.trainer.utils", "trl.trainer.ppov2_trainer", "trl.trainer.rloo_trainer",
                            "trl.trainer.ppo_trainer", "trl.experimental.ppo.ppo_trainer")),
    # the PPOv2 / RLOO v1 config base (0.10.1 - 0.26.2): one class with the fields of every release (0.11 changed
    # three), each with the default it always had
    "OnPolicyConfig": ("gone from trl.trainer.utils in TRL 0.27; trl-compat keeps the class, with the fields of "
                       "0.10 - 0.26", ("trl.trainer.utils", "trl.trainer.ppov2_config", "trl.trainer.rloo_config",
                                       "trl.trainer.ppo_config", "trl.experimental.ppo.ppo_config")),
    # NEFTune's embedding hook (0.7.3 - 0.11.4, the same code; SFTTrainer took neftune_noise_alpha= from 0.7.3)
    "neftune_post_forward_hook": ("removed from TRL in 0.12 (transformers.trainer_utils kept a copy until 5.1); "
                                  "trl-compat keeps the 0.11 function",
                                  ("trl.trainer.utils", "trl.trainer.sft_trainer")),
    "decode_and_strip_padding": ("removed from TRL in 0.25, no successor; trl-compat keeps the 0.19.1 function",
                                 ("trl.trainer.utils", "trl.trainer.reward_trainer")),
    "RewardDataCollatorWithPadding": ("gone in TRL 0.27 (the reward trainer collates chosen_input_ids / "
                                      "rejected_input_ids since); trl-compat keeps the 0.8.6 - 0.11.4 class "
                                      "(max_length= included)", ("trl.trainer.utils", "trl.trainer.reward_trainer")),
}
# no supported TRL has them: name -> why the compat.trl copy (compat._trainer_utils) is the last TRL body
_COPIED = {
    **{n: "moved to trl.experimental.ppo in TRL 0.27, gone in 1.13; trl-compat keeps the 0.26.2 function (the same "
          "in 1.12)" for n in ("batch_generation", "generate", "forward", "truncate_response", "print_rich_table")},
    "truncate_right": "moved to trl.experimental.utils in TRL 0.27, where 1.16's takes stop_token_ids (a list); "
                      "trl-compat keeps the 0.26.2 function (the same in 1.13)",
    "PeftSavingCallback": "removed from TRL in 0.7.5; trl-compat keeps the 0.7.4 callback",
    "trl_sanitze_kwargs_for_tagging": "removed from TRL in 0.14; trl-compat keeps the 0.13 function",
    "DPODataCollatorWithPadding": "trl.experimental.utils's class has no label_pad_token_id (fixed at -100); "
                                  "trl-compat keeps the 0.26.2 class (the same code since 0.8; 0.7's tokenizing "
                                  "class is marked instead)",
}
_CHANGED = {
    "DataCollatorForLanguageModeling": "trl.trainer.sft_trainer.DataCollatorForLanguageModeling is another class",
}


def _table() -> dict[str, Moved | Gone]:
    out: dict[str, Moved | Gone] = {}
    for name, module in _MOVED.items():
        out[f"trl.trainer.utils.{name}"] = Moved(module, name, "moved by TRL, same parameters")
    for name in _NO_SUCCESSOR:
        out[f"trl.trainer.utils.{name}"] = Gone(f"trl.trainer.utils.{name} is gone (TRL 0.27 - 1.0), no successor: "
                                                "copy it from the TRL your code pinned")
    for name, why in _CHANGED.items():
        out[f"trl.trainer.utils.{name}"] = Gone(f"trl.trainer.utils.{name} is gone: {why}")
    for name in ("cap_exp", "get_exp_cap"):
        out[f"trl.trainer.utils.{name}"] = Moved("compat.trl", name, _NOTE)
    for name, why in _COPIED.items():
        out[f"trl.trainer.utils.{name}"] = Moved("compat.trl", name, f"{why} (the project now needs trl-compat)")
    for name, (why, modules) in {**_PPO_COPIES, **_HELPER_COPIES}.items():
        for module in modules:
            out[f"{module}.{name}"] = Moved("compat.trl", name, f"{why} (the project now needs trl-compat)")
    for p in _FDIV_PATHS:
        out[p] = Gone("FDivergenceType " + _FDIV)
    for p in ("trl.FDivergenceConstants", "trl.trainer.FDivergenceConstants",
              "trl.trainer.dpo_config.FDivergenceConstants"):
        out[p] = Moved("compat.trl", "FDivergenceConstants", "removed from TRL in 0.29; trl-compat keeps the 0.28 "
                       "class (the project now needs trl-compat)")
    return out


#: TRL <= 0.7's DPODataCollatorWithPadding: built from the tokenizer, it tokenized the rows itself (read in the
#: 0.7.4 wheel: these fields, `tokenize_batch_element`, `collate`); 0.8 turned it into the padding-only class
_DPO_COLLATOR_07_FIELDS = frozenset({"tokenizer", "model", "padding", "padding_value", "max_length", "max_prompt_length",
                                     "truncation_mode", "max_target_length"})
_DPO_COLLATOR_07_MEMBERS = re.compile(r"\b(tokenize_batch_element|collate)\b|\bself\.(tokenizer|max_prompt_length|"
                                      r"max_target_length|truncation_mode)\b")
_DPO_COLLATOR_PATHS = frozenset({"trl.trainer.utils.DPODataCollatorWithPadding"})


def _dpo_collator_07(code: str) -> bool:
    """The module uses TRL 0.7's `DPODataCollatorWithPadding` API: a call of it (or of a class of the module
    deriving from it) with one of its tokenizer-era fields or its tokenizer as first positional, or such a class
    whose body reads its tokenizer-era members (luka-group/mDPO, vlf-silkie/VLFeedback: `trl==0.7.2`)."""
    if "DPODataCollatorWithPadding" not in code:
        return False
    try:
        tree = grammar.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return False
    names = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
             for a in n.names if a.name == "DPODataCollatorWithPadding"}
    lines = code.splitlines(keepends=True)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and any(isinstance(b, ast.Name) and b.id in names for b in node.bases):
            names.add(node.name)
            if _DPO_COLLATOR_07_MEMBERS.search("".join(lines[node.lineno - 1:node.end_lineno])):
                return True
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in names
               and ({k.arg for k in n.keywords} & _DPO_COLLATOR_07_FIELDS or n.args)
               for n in ast.walk(tree))


class RemovedTrainerUtils(SymbolMigration):
    summary = "trl.trainer.utils helpers gone in 0.27-1.0: cap_exp, batch_generation, ... -> compat.trl, moved " \
              "ones -> their new module, the rest marked"
    triggers = ("cap_exp", "get_exp_cap", "RunningMoments", "FDivergence", "trainer.utils", "trainer import",
                "KLController", "BaseTrainer", "exact_div", "compute_accuracy", "INVALID_LOGPROB", "OnlineTrainerState",
                "neftune_post_forward_hook", "OnPolicyConfig")
    symbols = _table()
    conditional = _DPO_COLLATOR_PATHS
    _collator_07 = False  # set per module by `transform` (one worker process runs one module at a time)

    def convertible(self, qname: str, call: cst.Call | None) -> str | None:
        if self._collator_07:
            return ("DPODataCollatorWithPadding is used with TRL 0.7's API here (tokenizer=, max_length=, "
                    "max_prompt_length=, tokenize_batch_element, collate): 0.8 made it a padding-only class and "
                    "trl-compat keeps that one; keep a copy of TRL 0.7's class (trl/trainer/utils.py) in the project")
        return None

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        self._collator_07 = _dpo_collator_07(ctx.module_code(wrapper))
        if "FDivergenceType" in ctx.module_code(wrapper):
            module = _fdivergence_values(wrapper, ctx, self.id)
            if module is not wrapper.module:
                wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
                ctx = dataclasses.replace(ctx, code=None)  # the findings list stays the engine's
        return super().transform(wrapper, ctx)


class _FDivergenceUses(cst.CSTVisitor):
    """Every reference of TRL's FDivergenceType (by qualified name) and those of the form `FDivergenceType.X.value`."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def __init__(self) -> None:
        super().__init__()
        self.refs: set[int] = set()
        self.covered: set[int] = set()  # the references inside a `FDivergenceType.X.value`
        self.values: dict[int, str] = {}  # id(the `.value` Attribute) -> the member's string

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def _is_enum(self, node: cst.CSTNode) -> bool:
        names = self.get_metadata(QualifiedNameProvider, node, set())
        return bool(names) and all(q.name in _FDIV_PATHS for q in names)

    def visit_Name(self, node: cst.Name) -> None:
        if self._is_enum(node):
            self.refs.add(id(node))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if self._is_enum(node):
            self.refs.add(id(node))
        inner = node.value
        if node.attr.value == "value" and isinstance(inner, cst.Attribute) and inner.attr.value in FDIV_VALUES \
                and self._is_enum(inner.value):
            self.values[id(node)] = FDIV_VALUES[inner.attr.value]
            self.covered.add(id(inner.value))


def _fdivergence_values(wrapper: cst.MetadataWrapper, ctx: RuleContext, rule_id: str) -> cst.Module:
    """`FDivergenceType.X.value` -> its string when every use of the enum in the file is one (the strings are what
    DPOConfig.f_divergence_type takes on every release), and the import dropped; else the module unchanged."""
    uses = _FDivergenceUses()
    wrapper.visit(uses)
    if not uses.values or uses.refs - uses.covered:
        return wrapper.module

    class _Replace(cst.CSTTransformer):
        def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
            value = uses.values.get(id(original_node))
            return updated_node if value is None else cst.SimpleString(f'"{value}"')

    module = wrapper.module.visit(_Replace())
    for path in _FDIV_PATHS:
        mod, name = path.rsplit(".", 1)
        module = drop_unused_import(module, mod, name)
    ctx.report(Finding(rule_id, "FDivergenceType.X.value (removed in TRL 0.29) written as its string", 0, 0,
                       "removed-trainer-utils", "info", True))
    return module


MIGRATION = RemovedTrainerUtils()
