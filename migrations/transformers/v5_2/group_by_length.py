"""group-by-length: `TrainingArguments(group_by_length=)` (and a TRL config's) after transformers 5.2 removed it.

The facts (read from the wheels): transformers 4.56.2 - 5.1 have `group_by_length: bool = False`; `Trainer` reads it
in `_get_train_sampler` (a `LengthGroupedSampler` over `train_batch_size * gradient_accumulation_steps`, lengths from
`length_column_name` when the dataset has it, else the processing class's first input) and in `_get_eval_sampler`
(one over `eval_batch_size`), else a `RandomSampler` / the sequential eval sampler. 5.2 removed the field for
`train_sampling_strategy: str = "random"` (`"random"`, `"sequential"`, `"group_by_length"`): `"group_by_length"`
builds the same two samplers from the same arguments, `"random"` the same `RandomSampler` (5.2 - 5.24 unchanged).
TRL 1.13 - 1.16 read neither field except `KTOConfig`, which declares its own `train_sampling_strategy`
(default `"sequential"`, checked by its trainer). TRL 1.13 - 1.16 require `transformers>=4.56.2`, so a migrated
manifest allows 4.56.2 .. 5.24 unless the repository pins `transformers>=5.2`.

In a call whose callee resolves to `transformers.TrainingArguments` (or `Seq2SeqTrainingArguments`) or a TRL config:

* `group_by_length=False` (a literal) is dropped: the default on 4.56 - 5.1, and 5.2's default sampler is the same;
* where the repository's own pin admits no transformers older than 5.2: a literal `True` becomes
  `train_sampling_strategy="group_by_length"`;
* otherwise `group_by_length=v` becomes `**length_grouping(v)` (`compat.trl._length_grouping`): the keyword as
  written where the installed `TrainingArguments` has the field (the original call), `train_sampling_strategy=
  "group_by_length"` on 5.2+ when `v` is true (the samplers 4.x built), nothing when false (the default).

Marked instead: a `KTOConfig` call (its own `train_sampling_strategy` default differs), a call that passes
`train_sampling_strategy=` too or has a `*` / `**` splat that may carry either (not `**warmup(...)`), a module that binds `length_grouping`
itself, and every other use of an attribute `.group_by_length` (`args.group_by_length` is an `AttributeError` on
5.2+: read `args.train_sampling_strategy == "group_by_length"` there). A 4.x transformers target never runs the rule.
"""

from __future__ import annotations

import libcst as cst

from migrations.base import PythonMigration, RuleContext
from migrations.kinds.cst import kwarg, literal_value, replace_args
from migrations.kinds.imports import imported_names
from migrations.kinds.options import KTO_CONFIGS
from migrations.kinds.training_args import (
    COMPAT_SPLATS,
    FieldTransformer,
    HelperSplatMigration,
    foreign_splat,
)

_KEYS = COMPAT_SPLATS["compat.trl.length_grouping"]
_MISSING = object()
_MARK = ("TrainingArguments(group_by_length=) is gone in transformers 5.2 (train_sampling_strategy="
         "\"group_by_length\" there, not on 4.x): pass **length_grouping(v) from compat.trl; not rewritten: {why}")


class _Transformer(FieldTransformer):
    field = "group_by_length"
    use_message = ("if this is a TrainingArguments / TRL config: group_by_length is gone in transformers 5.2, "
                   "read train_sampling_strategy == \"group_by_length\" there (4.x has only group_by_length)")

    def __init__(self, rule: PythonMigration, ctx: RuleContext, plain: bool, helper_ok: bool) -> None:
        super().__init__(rule, ctx)
        self.plain, self.helper_ok, self.needed = plain, helper_ok, False

    def keyword(self, original: cst.Call, updated: cst.Call, arg: cst.Arg) -> cst.BaseExpression:
        args = list(updated.args)
        if imported_names(self, original.func) & KTO_CONFIGS:
            self.todo(original, _MARK.format(why="KTOConfig declares its own train_sampling_strategy "
                                                 "(default \"sequential\")"))
            return updated
        if kwarg(updated, "train_sampling_strategy") is not None or foreign_splat(self, original, _KEYS):
            self.todo(original, _MARK.format(why="the call passes train_sampling_strategy= or a * / ** splat"))
            return updated
        value = literal_value(arg.value, _MISSING)
        if value is False:
            self.note(original, "group_by_length=False dropped: the default sampler on every transformers")
            return replace_args(updated, [a for a in args if a is not arg])
        if self.plain and value is True:
            self.note(original, "group_by_length=True -> train_sampling_strategy=\"group_by_length\" (the manifest "
                                "requires transformers>=5.2)")
            new = arg.with_changes(keyword=cst.Name("train_sampling_strategy"),
                                   value=cst.SimpleString('"group_by_length"'))
            return updated.with_changes(args=[new if a is arg else a for a in args])
        if not self.helper_ok:
            self.todo(original, _MARK.format(why="this module binds a name `length_grouping` of its own"))
            return updated
        self.needed = True
        self.note(original, "group_by_length= -> **length_grouping(...) (compat.trl: group_by_length= where the "
                            "installed transformers has it, train_sampling_strategy= on 5.2+)")
        splat = arg.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT, star="**",
                                 value=cst.Call(cst.Name("length_grouping"), [cst.Arg(arg.value)]))
        return replace_args(updated, [splat if a is arg else a for a in args])


class GroupByLength(HelperSplatMigration):
    summary = ("TrainingArguments / TRL config group_by_length= (removed in transformers 5.2) -> "
               "**length_grouping(v) from compat.trl, or train_sampling_strategy= under a transformers>=5.2 pin")
    triggers = ("group_by_length",)
    requires = ("transformers", "trl")
    helper, plain_from, transformer = "length_grouping", "5.2.0", _Transformer


MIGRATION = GroupByLength()
