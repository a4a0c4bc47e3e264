"""overwrite-output-dir: `TrainingArguments(overwrite_output_dir=)` (and a TRL config's), removed in transformers 5.0.

What the field did (read in the 4.56.2 and 4.57.6 wheels, every module): nothing in `Trainer`, `TrainingArguments`
or TRL 1.13 - 1.16 reads it (the last-checkpoint check that refused a non-empty `output_dir` lived in the example
scripts: `if ... and not training_args.overwrite_output_dir`); the one reader in the library is
`integrations.NeptuneCallback.on_init_end`, which, for a callback built with `log_checkpoints=`, copies checkpoints
to a temporary folder before uploading them when the field is true. The auto-added integration callbacks
(`report_to`) build it without `log_checkpoints`, so there the field is never looked at either. 5.0 removed the field
(a `TypeError`); the run writes into `output_dir` whatever it was, as 4.x did.

So, in a call whose callee resolves to `transformers.TrainingArguments` (or `Seq2SeqTrainingArguments`) or a TRL
config, `overwrite_output_dir=<side-effect free value>` is dropped: the training run, its checkpoints and outputs are
the same on every release the migrated manifest allows (4.56.2 keeps the field at its default; only the serialized
arguments, `training_args.bin` and the hyperparameters logged to trackers, no longer show `True`).

Marked instead: a module that names `transformers`' `NeptuneCallback` (resolved by qualified name) or uses an
attribute `.overwrite_output_dir` anywhere (the example scripts' own check reads it: dropping the keyword would turn
that read to False on 4.x, and on 5.x it is an `AttributeError`; each such use is marked too), and a value with side
effects. A read on a name that provably holds an `argparse.Namespace` (`args = parser.parse_args()` with
`parser = argparse.ArgumentParser(...)`, or a parameter every call passes such a name: a script's own
`--overwrite_output_dir` option) is the script's, not the field: it neither blocks nor is marked, and
`overwrite_output_dir=args.overwrite_output_dir` is dropped like any other plain value.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import ParentNodeProvider, QualifiedNameProvider, ScopeProvider

from migrations.base import PythonMigration, RuleContext
from migrations.kinds.bindings import holds_namespace
from migrations.kinds.cst import replace_args, side_effect_free
from migrations.kinds.imports import imported_names
from migrations.kinds.training_args import FieldTransformer

_NEPTUNE = frozenset({"transformers.integrations.NeptuneCallback",
                      "transformers.integrations.integration_utils.NeptuneCallback"})
_FIELD = "overwrite_output_dir"
_NEPTUNE_WHY = "this module uses NeptuneCallback, which reads it (log_checkpoints=)"
_MARK = ("TrainingArguments(overwrite_output_dir=) was removed in transformers 5.0 (4.x Trainer never read it: 5.x "
         "writes into output_dir as 4.x did): drop it; not dropped: {why}")


class _Blockers(cst.CSTVisitor):
    """Why no `overwrite_output_dir=` of the module may be dropped: it names transformers' `NeptuneCallback`, or it
    uses an attribute `.overwrite_output_dir` (None when neither)."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider, ScopeProvider, ParentNodeProvider)

    def __init__(self) -> None:
        super().__init__()
        self.why: str | None = None

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == _FIELD and not holds_namespace(self, node.value, lambda n: imported_names(self, n)):
            self.why = "this module reads .overwrite_output_dir (False once the keyword is gone)"
        elif self.why is None and imported_names(self, node) & _NEPTUNE:
            self.why = _NEPTUNE_WHY

    def visit_Name(self, node: cst.Name) -> None:
        if self.why is None and imported_names(self, node) & _NEPTUNE:
            self.why = _NEPTUNE_WHY


class _Transformer(FieldTransformer):
    field = _FIELD
    use_message = ("if this is a TrainingArguments / TRL config: overwrite_output_dir is gone in transformers 5.0 "
                   "(an AttributeError there): replace this check, e.g. with a flag of your own script arguments")

    def __init__(self, rule: PythonMigration, ctx: RuleContext, why: str | None) -> None:
        super().__init__(rule, ctx)
        self.why = why

    def keyword(self, original: cst.Call, updated: cst.Call, arg: cst.Arg) -> cst.BaseExpression:
        if self.why is not None:
            self.todo(original, _MARK.format(why=self.why))
            return updated
        if not side_effect_free(arg.value):
            self.todo(original, _MARK.format(why="its value may have side effects"))
            return updated
        self.note(original, "overwrite_output_dir= dropped (removed in transformers 5.0; no 4.x Trainer code read it)")
        return replace_args(updated, [a for a in updated.args if a is not arg])


class OverwriteOutputDir(PythonMigration):
    summary = ("TrainingArguments / TRL config overwrite_output_dir= (removed in transformers 5.0, read by no "
               "Trainer code) dropped, else marked")
    triggers = (_FIELD,)
    requires = ("transformers", "trl")

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        blockers = _Blockers()
        wrapper.visit(blockers)
        t = _Transformer(self, ctx, blockers.why)
        module = wrapper.visit(t)
        return module if t.changed else wrapper.module


MIGRATION = OverwriteOutputDir()
