"""training-args-reads: reads of the `TrainingArguments` fields transformers 5.0 removed, on provable instances.

The keyword of a removed field is the business of `removed-training-arguments` (and `overwrite-output-dir`); the
field is read far from the call too: a PPO-era trainer subclass saving its own checkpoints reads
`self.args.save_safetensors` (dylanjoo/retrisound's `_save`, the ChatGLM PPO trainers' `save_pretrained(...,
safe_serialization=self.args.save_safetensors)`), a copied `prediction_step` reads `self.args.past_index`. On 5.x
that read is an `AttributeError`, usually at the first checkpoint, hours into a run.

The fields are derived from the atlas: those of `transformers.TrainingArguments` on the last 4.x release that no 5.x
release has, with the default 4.x declares. The instances: `self.args` in a method of a class deriving from
`transformers.Trainer` / `Seq2SeqTrainer` or a TRL trainer (directly, through a class of the same module, or through a
project subclass it imports), and a name provably bound to `TrainingArguments`, `Seq2SeqTrainingArguments` or a TRL
config (a call, a position of a parser's output, a parameter every call passes one: `migrations.kinds.bindings`).
Anything else named `.save_safetensors` (a script's own option) is left alone.

* a read becomes `getattr(<instance>, "<field>", <4.x default>)`: the same value on every 4.x release; on 5.x the
  field can no longer be set (its keyword is a `TypeError`, its command-line flag a parser error), so the read answers
  what 4.x answered for a config that did not set it. For `save_safetensors` that is also what 5.x does (it always
  saves safetensors);
* marked instead: a read of a field 4.56 already mapped onto a successor (`no_cuda` -> `use_cpu`, `per_gpu_*` ->
  `per_device_*`, `push_to_hub_token` -> `hub_token`: the keyword rule moves the value there, so read the successor),
  a field whose 4.x default is not a literal, and every write or `del` (5.x's Trainer no longer reads the field);
* `overwrite_output_dir` is left to its own rule (`overwrite-output-dir` marks its reads).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import libcst as cst
from libcst.metadata import ParentNodeProvider, QualifiedNameProvider, ScopeProvider

from migrations.base import MigrationTransformer, PythonMigration, RuleContext
from migrations.kinds import grammar
from migrations.kinds.bindings import config_binding
from migrations.kinds.cst import code, literal_value
from migrations.kinds.imports import imported_names
from migrations.kinds.trainer_subclasses import TRAINERS, imported_subclasses, trainer_base
from migrations.kinds.training_args import RENAMED_FIELDS, is_training_config, local_training_config

_OWN_RULE = frozenset({"overwrite_output_dir"})


@lru_cache(maxsize=1)
def removed_fields() -> dict[str, str]:
    """field -> its default's source text on the last 4.x release, for the `TrainingArguments` fields that release
    declares and no 5.x release of the atlas has."""
    from migrations.atlas import Atlas

    atlas = Atlas.load("transformers")
    releases = atlas.releases()
    last4 = [r for r in releases if r.startswith("4.")][-1]
    fives = [r for r in releases if r.startswith("5.")]
    before = atlas.signature(last4, "transformers.TrainingArguments")
    assert before is not None, "the transformers atlas lost TrainingArguments"
    later: set[str] = set()
    for release in fives:
        sig = atlas.signature(release, "transformers.TrainingArguments")
        later |= set(sig.names()) if sig is not None else set()
    return {p.name: p.default or "None" for p in before.params
            if p.kind not in ("va", "vk") and p.name not in later and p.name not in _OWN_RULE}


# the prefilter: a file must hold `.<field>` of one of them (the list is the atlas's; a test compares the two)
_TRIGGERS = (".adafactor", ".fp16_backend", ".fp16_opt_level", ".fsdp_min_num_params",
             ".fsdp_transformer_layer_cls_to_wrap", ".half_precision_backend", ".include_inputs_for_metrics",
             ".include_tokens_per_second", ".jit_mode_eval", ".mp_parameters", ".no_cuda", ".past_index",
             ".per_gpu_eval_batch_size", ".per_gpu_train_batch_size", ".push_to_hub_model_id",
             ".push_to_hub_organization", ".push_to_hub_token", ".ray_scope", ".save_safetensors", ".torchdynamo",
             ".tpu_metrics_debug", ".tpu_num_cores", ".use_legacy_prediction_loop", ".use_mps_device")


class _Transformer(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider, ScopeProvider, ParentNodeProvider)

    def __init__(self, rule: PythonMigration, ctx: RuleContext) -> None:
        super().__init__(rule, ctx)
        self._removed = removed_fields()
        self._imported: dict[str, str] = {}  # the project's Trainer subclasses this module imports
        self._trainer_classes: set[str] = set()  # module-level classes of this module deriving from a trainer
        self._classes: list[bool] = []  # per enclosing class: a trainer class

    def _qnames(self, node: cst.CSTNode) -> set[str]:
        return imported_names(self, node)

    def visit_Module(self, node: cst.Module) -> None:
        try:
            tree = grammar.parse(node.code)
        except (SyntaxError, ValueError):
            return
        self._imported = imported_subclasses(tree, self.ctx.path, TRAINERS, None)

    # -- which classes are trainers ----------------------------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        local = {**self._imported, **dict.fromkeys(self._trainer_classes, "")}
        trainer = any(trainer_base(self, b.value, local) for b in node.bases if b.keyword is None)
        self._classes.append(trainer)
        if trainer and not self._classes[:-1]:
            self._trainer_classes.add(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        self._classes.pop()
        return updated_node

    # -- which objects are training configs --------------------------------------------------------------------
    def _is_config(self, value: cst.BaseExpression, field: str) -> bool:
        if isinstance(value, cst.Attribute) and value.attr.value == "args" and isinstance(value.value, cst.Name) \
                and value.value.value == "self":
            return bool(self._classes) and self._classes[-1] and self._in_method(value)
        binding = config_binding(self, value, self._qnames)
        if binding is None:
            return False
        qnames = self._qnames(binding.cls)
        return is_training_config(qnames) or local_training_config(self.ctx, qnames, (field,))

    def _in_method(self, node: cst.CSTNode) -> bool:
        """`node` sits in a function defined directly in the class body (a method), not in a nested class."""
        scope = self.get_metadata(ScopeProvider, node, None)
        parent = getattr(scope, "parent", None)
        return type(scope).__name__ == "FunctionScope" and type(parent).__name__ == "ClassScope"

    # -- the reads ---------------------------------------------------------------------------------------------
    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        field = original_node.attr.value
        if field not in self._removed or not self._is_config(original_node.value, field):
            return updated_node
        parent = self.get_metadata(ParentNodeProvider, original_node, None)
        where = code(original_node.value)
        if isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)) and parent.target is original_node \
                or isinstance(parent, cst.Del):
            self.todo(original_node, f"{where}.{field}: a TrainingArguments field transformers 5.0 removed; its "
                                     "Trainer no longer reads it: decide what this assignment should do, then drop it")
            return updated_node
        if field in RENAMED_FIELDS:
            self.todo(original_node, f"{where}.{field}: TrainingArguments lost the field in transformers 5.0 (an "
                                     f"AttributeError); its keyword becomes {RENAMED_FIELDS[field]}=: read "
                                     f"{where}.{RENAMED_FIELDS[field]}")
            return updated_node
        default = self._removed[field]
        value: Any = literal_value(cst.parse_expression(default), _MISSING)
        if value is _MISSING:
            self.todo(original_node, f"{where}.{field}: TrainingArguments lost the field in transformers 5.0 (an "
                                     "AttributeError)")
            return updated_node
        self.note(original_node, f"{where}.{field} -> getattr(..., {default}): TrainingArguments lost the field in "
                                 f"transformers 5.0 (an AttributeError); {default} is its 4.x default")
        fallback = cst.SimpleString(f'"{value}"') if isinstance(value, str) and value.isidentifier() \
            else cst.parse_expression(default)  # 'auto' as "auto"
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        return cst.Call(func=cst.Name("getattr"), args=[
            cst.Arg(updated_node.value, comma=comma), cst.Arg(cst.SimpleString(f'"{field}"'), comma=comma),
            cst.Arg(fallback)])


_MISSING = object()


class TrainingArgsReads(PythonMigration):
    summary = "reads of TrainingArguments fields transformers 5.0 removed (self.args.save_safetensors): getattr with " \
              "the 4.x default, else marked"
    triggers = _TRIGGERS
    requires = ("transformers", "trl")
    transformer = _Transformer


MIGRATION = TrainingArgsReads()
