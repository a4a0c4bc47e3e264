"""`TrainingArguments` fields that transformers removed, on the calls of every class that inherits them.

TRL's configs never declare most `TrainingArguments` fields: `SFTConfig(group_by_length=True)` passes the field to
the `transformers.TrainingArguments` it inherits, so a field transformers removes breaks every TRL config at once,
whatever the TRL release. The rules for such removals (`migrations/transformers/v5_*/`) share:

* `is_training_config`: a call's callee is `TrainingArguments` / `Seq2SeqTrainingArguments` or a TRL config
  (`trl.<...>Config`, resolved by qualified name: a local class named `SFTConfig` is not one);
* `FieldTransformer`: finds the field's keyword in those calls (handed to the rule's `keyword` method) and marks
  every other use of an attribute of that name (`args.group_by_length`), which the removal turns into an
  `AttributeError` (a read) or a silent no-op (a write);
* `foreign_splat`: whether a call has a `*` / `**` splat that may carry the keywords a rule rewrites (the splats of
  the `compat.trl` keyword helpers these rules write, `**warmup(...)`, `**length_grouping(...)`, carry known ones);
* `binds_name`: whether a module binds a name itself, before a rule imports a `compat.trl` helper under it;
* `pin_admits_none_before`: whether the repository's own pin of a library admits no release older than the one
  that introduced a successor, so the successor alone can be written;
* `HelperSplatMigration`: the shape of a rule that writes `**helper(...)` from `compat.trl` where no keyword is
  valid on every release (`warmup-ratio`, `group-by-length`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path
from typing import ClassVar

import libcst as cst
from libcst.metadata import GlobalScope, ParentNodeProvider, QualifiedNameProvider, ScopeProvider
from packaging.version import Version

from migrations.base import MigrationTransformer, PythonMigration, RuleContext
from migrations.kinds import grammar
from migrations.kinds.bindings import holds_namespace
from migrations.kinds.imports import ensure_imports, imported_names

__all__ = ["COMPAT_SPLATS", "RENAMED_FIELDS", "TRAINING_ARGUMENTS", "FieldTransformer", "HelperSplatMigration",
           "HelperSplatTransformer", "binds_name", "foreign_splat", "is_training_config", "pin_admits_none_before"]

TRAINING_ARGUMENTS = frozenset({
    "transformers.TrainingArguments", "transformers.training_args.TrainingArguments",
    "transformers.Seq2SeqTrainingArguments", "transformers.training_args_seq2seq.Seq2SeqTrainingArguments",
})
#: fields transformers 5.0 removed whose successor 4.56.2 already maps the old field onto (read in its
#: `training_args.py`), so the new spelling behaves the same on every release a migrated manifest allows
RENAMED_FIELDS = {
    "no_cuda": "use_cpu",
    "per_gpu_train_batch_size": "per_device_train_batch_size",
    "per_gpu_eval_batch_size": "per_device_eval_batch_size",
    "push_to_hub_token": "hub_token",
}


def is_training_config(qnames: Iterable[str]) -> bool:
    """A `TrainingArguments` call, or one of a TRL config (`trl.<...>Config`, every one inherits the fields)."""
    qnames = set(qnames)
    return bool(qnames & TRAINING_ARGUMENTS) or any(q.startswith("trl.") and q.endswith("Config") for q in qnames)


def local_training_config(ctx: RuleContext, qnames: Iterable[str], fields: Iterable[str]) -> bool:
    """A project class (the run's `LocalClasses` index) deriving from `TrainingArguments` / a TRL config through
    classes of the project none of which defines `__init__` (the dataclass constructor, which takes every inherited
    field) or declares one of `fields` itself (a field of its own, or a default of its own for one the rule reads):
    jackfsuia/nanoRLHF's `@dataclass class RAFTConfig(PPOConfig)` built with `logging_dir=`."""
    local = ctx.options.local_classes
    if local is None:
        return False
    fields = set(fields)
    for q in qnames:
        cls = local.find_in(ctx.path, q)
        if cls is None:
            continue
        classes, outside = local.lineage(cls.qname)
        if any(fields & set(c.fields) or "__init__" in c.methods for c in classes):
            return False
        return bool(set(outside) & TRAINING_ARGUMENTS) or is_training_config(outside)
    return False


def config_call(t: MigrationTransformer, func: cst.BaseExpression, fields: Iterable[str]) -> bool:
    """`func`, called, builds a training config that takes `fields`: `TrainingArguments`, a TRL config, or a project
    subclass of one (`local_training_config`)."""
    qnames = imported_names(t, func)
    if is_training_config(qnames):
        return True
    local = t.ctx.options.local_classes
    if not qnames and local is not None and isinstance(func, cst.Name):
        # a class this module defines once at its top level, by the name the run's index knows it by
        scope = t.lazy_metadata(ScopeProvider, func, None)
        found = [a for a in scope[func.value] if hasattr(a, "node")] if scope is not None else []
        if len(found) == 1 and isinstance(found[0].node, cst.ClassDef) and isinstance(found[0].scope, GlobalScope):
            own = local.defined_in(t.ctx.path, func.value)
            qnames = {own.qname} if own is not None else set()
    return local_training_config(t.ctx, qnames, fields)


#: the `compat.trl` keyword helpers the rules write as `**helper(...)` -> every keyword the splat may carry
COMPAT_SPLATS: dict[str, frozenset[str]] = {
    "compat.trl.warmup": frozenset({"warmup_ratio", "warmup_steps"}),
    "compat.trl.length_grouping": frozenset({"group_by_length", "train_sampling_strategy"}),
    "compat.trl.tensorboard_dir": frozenset({"logging_dir"}),
}


def foreign_splat(t: cst.MetadataDependent, call: cst.Call, keywords: Iterable[str]) -> bool:
    """Whether `call` (a node of `t`'s tree) has a `*` / `**` splat that may carry one of `keywords`: any splat but
    a `**helper(...)` of `COMPAT_SPLATS` (resolved by qualified name) whose keywords are disjoint from them."""
    wanted = set(keywords)
    for arg in call.args:
        if not arg.star:
            continue
        if arg.star != "**" or not isinstance(arg.value, cst.Call):
            return True
        carried = [COMPAT_SPLATS[q] for q in imported_names(t, arg.value.func) if q in COMPAT_SPLATS]
        if not carried or any(keys & wanted for keys in carried):
            return True
    return False


def binds_name(text: str, name: str, helper_module: str = "compat.trl") -> bool:
    """True when the module binds `name` anywhere other than `from helper_module import name` (a function, class,
    assignment, loop target, parameter, import of another `name`): a helper imported under that name would clash."""
    if re.search(rf"\b{re.escape(name)}\b", text) is None:
        return False
    try:
        tree = grammar.parse(text)
    except (SyntaxError, ValueError):  # code no grammar migrations.kinds.grammar knows reads: assume it does
        return True
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return True
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            return True
        if isinstance(node, ast.arg) and node.arg == name:
            return True
        ours = isinstance(node, ast.ImportFrom) and node.module == helper_module and node.level == 0
        if isinstance(node, (ast.Import, ast.ImportFrom)) and not ours and \
                any((a.asname or a.name) == name for a in node.names):
            return True
    return False


def pin_admits_none_before(path: str | None, library: str, first: str) -> bool:
    """True when the repository's own pin of `library` (read beside `path`) admits some release of the atlas from
    `first` on and none older: the manifest rule keeps such a pin, so every release the migrated code may meet is
    `first` or newer. False without a path or a pin, or for a pin no release from `first` on satisfies
    (HahmDY/reward-modeling-develop's `transformers==4.53.1`: raised to the floor, which admits older ones)."""
    if not path:
        return False
    from migrations.atlas import Atlas
    from migrations.kinds.pins import requirement_spec

    spec = requirement_spec(str(Path(path).parent), library)
    if spec is None:
        return False
    releases = Atlas.load(library).releases()
    # a pin no release from `first` on satisfies (`transformers==4.53.1`, which the atlas may not even list) is one
    # the manifest rule raises to the floor, which admits the releases before `first` again
    return any(spec.contains(r, prereleases=True) for r in releases if Version(r) >= Version(first)) and \
        not any(spec.contains(r, prereleases=True) for r in releases if Version(r) < Version(first))


class FieldTransformer(MigrationTransformer):
    """Hands each `field=` keyword of a training-config call to `keyword`, and marks the other attribute uses of
    `field` with `use_message` (the object of such a use is not resolved: the marker says "if"), except on a name
    that provably holds an `argparse.Namespace` (a script's own `--field` option)."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider, ScopeProvider, ParentNodeProvider)
    field: str = ""
    use_message: str = ""

    def __init__(self, rule: PythonMigration, ctx: RuleContext) -> None:
        super().__init__(rule, ctx)

    def keyword(self, original: cst.Call, updated: cst.Call, arg: cst.Arg) -> cst.BaseExpression:
        """The call with `arg` (its `field=` keyword) handled: rewritten, or marked and returned as it is."""
        raise NotImplementedError

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        arg = next((a for a in updated_node.args if a.keyword is not None and a.keyword.value == self.field), None)
        if arg is None or not config_call(self, original_node.func, (self.field,)):
            return updated_node
        return self.keyword(original_node, updated_node, arg)

    def namespace_read(self, node: cst.Attribute) -> bool:
        """`node` reads an option of an `argparse.Namespace` (see `holds_namespace`), not a training config's field."""
        return holds_namespace(self, node.value, lambda n: imported_names(self, n))

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        if original_node.attr.value == self.field and not self.namespace_read(original_node):
            self.todo(original_node, self.use_message)
        return updated_node


class HelperSplatTransformer(MigrationTransformer):
    """The transformer of a `HelperSplatMigration`: `plain` and `helper_ok` as the rule found them; set `needed`
    when it wrote `**helper(...)`."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def __init__(self, rule: PythonMigration, ctx: RuleContext, plain: bool, helper_ok: bool) -> None:
        super().__init__(rule, ctx)
        self.plain, self.helper_ok, self.needed = plain, helper_ok, False


class HelperSplatMigration(PythonMigration):
    """A rule whose transformer (`transformer(rule, ctx, plain=, helper_ok=)`, setting `needed` when it wrote
    `**helper(...)`) rewrites a removed field: `plain` when the repository's transformers pin admits no release older
    than `plain_from` (the successor keyword alone is valid), `helper_ok` when the module does not bind `helper`
    itself; `from compat.trl import helper` is added when it was used."""

    helper: ClassVar[str]
    plain_from: ClassVar[str]
    transformer: ClassVar[type[MigrationTransformer]]

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        t = self.transformer(self, ctx, plain=pin_admits_none_before(ctx.path, "transformers", self.plain_from),
                             helper_ok=not binds_name(ctx.module_code(wrapper), self.helper))
        module = wrapper.visit(t)
        if getattr(t, "needed", False):
            module = ensure_imports(module, [("compat.trl", self.helper)])
        return module if t.changed else wrapper.module
