"""logging-dir: `TrainingArguments(logging_dir=d)` (and a TRL config's) after transformers 5.15 removed the field.

The facts (read from the wheels): in transformers 4.56.2 - 5.14 `logging_dir` is read by one thing only, the
TensorBoard callback (`TensorBoardCallback`: `log_dir = args.logging_dir`), which runs when `report_to` names
`tensorboard` (or `all`, which takes every installed integration); `report_to`'s default was `all` in 4.x and is
`"none"` since 5.0. 5.15 removed the field (a `TypeError`); TensorBoard's folder comes from the environment variable
`TENSORBOARD_LOGGING_DIR` there (default `<output_dir>/runs/<timestamp>`).

So where TensorBoard cannot run on 5.15+ the keyword is dead there, and the rule writes, in a call whose callee
resolves to `transformers.TrainingArguments` (or `Seq2SeqTrainingArguments`) or to a TRL config whose `report_to=`
is absent (the 5.x default, `"none"`) or a literal that names neither `tensorboard` nor `all`:

* where the repository's own transformers pin admits no release older than 5.15: the keyword dropped;
* otherwise `**tensorboard_dir(d)` from `compat.trl` (`compat.trl._tensorboard_dir`): `logging_dir=d` where the
  installed `TrainingArguments` still has the field (the call is the original one, TensorBoard included on 4.x),
  nothing on 5.15+. The splat sits where the keyword was, so the evaluation order is the written one.

Marked instead, with the fix (set `TENSORBOARD_LOGGING_DIR` before training): `report_to=` naming `tensorboard` or
`all`, or not a literal (a variable, a parsed flag), a `*` / `**` splat that may carry `report_to` or `logging_dir`,
or a module that binds `tensorboard_dir` itself. A 4.x or 5.0 - 5.14 transformers target never runs the rule.
"""

from __future__ import annotations

import libcst as cst

from migrations.kinds.cst import kwarg, literal_value, replace_args
from migrations.kinds.imports import imported_names
from migrations.kinds.training_args import (
    COMPAT_SPLATS,
    HelperSplatMigration,
    HelperSplatTransformer,
    foreign_splat,
    is_training_config,
)

_MISSING = object()
_MARK = ("logging_dir= was removed in transformers 5.15: set the environment variable TENSORBOARD_LOGGING_DIR to this "
         "folder before training, and drop the argument; not rewritten: {why}")


def _tensorboard_off(report_to: cst.Arg | None) -> str | None:
    """None when TensorBoard cannot run on transformers 5.x with this `report_to=` (absent: the default "none"; a
    literal naming neither "tensorboard" nor "all"), else why it may."""
    if report_to is None:
        return None
    value = literal_value(report_to.value, _MISSING)
    if value is None:
        return None  # None is "none" on 5.x
    names = [value] if isinstance(value, str) else list(value) if isinstance(value, (list, tuple)) else None
    if names is None or not all(isinstance(n, str) for n in names):
        return "report_to= is not a literal (TensorBoard may log to this folder)"
    if {"tensorboard", "all"} & set(names):
        return "report_to= includes TensorBoard, which logs to this folder"
    return None


class _Transformer(HelperSplatTransformer):
    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        folder = kwarg(updated_node, "logging_dir")
        if folder is None or not is_training_config(imported_names(self, original_node.func)):
            return updated_node
        args = list(updated_node.args)
        if foreign_splat(self, original_node, {"report_to", *COMPAT_SPLATS["compat.trl.tensorboard_dir"]}):
            self.todo(original_node, _MARK.format(why="this call has a * or ** splat (it may pass report_to)"))
            return updated_node
        why = _tensorboard_off(kwarg(updated_node, "report_to"))
        if why is not None:
            self.todo(original_node, _MARK.format(why=why))
            return updated_node
        if self.plain:
            self.note(original_node, "logging_dir= dropped: only TensorBoard read it, and report_to= leaves it off "
                                     "(the manifest requires transformers>=5.15, which has no such field)")
            return replace_args(updated_node, [a for a in args if a is not folder])
        if not self.helper_ok:
            self.todo(original_node, _MARK.format(why="this module binds a name `tensorboard_dir` of its own"))
            return updated_node
        helper = cst.Call(cst.Name("tensorboard_dir"), [cst.Arg(folder.value)])
        splat = folder.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT, star="**", value=helper)
        self.needed = True
        self.note(original_node, "logging_dir= -> **tensorboard_dir(...) (compat.trl: logging_dir= where the "
                                 "installed transformers has it; nothing on 5.15+, where report_to= leaves TensorBoard "
                                 "off)")
        return replace_args(updated_node, [splat if a is folder else a for a in args])


class LoggingDir(HelperSplatMigration):
    summary = ("TrainingArguments / TRL config logging_dir= (removed in transformers 5.15) -> **tensorboard_dir(d) "
               "from compat.trl where TensorBoard is off, else TODO")
    triggers = ("logging_dir",)
    requires = ("transformers", "trl")
    helper, plain_from, transformer = "tensorboard_dir", "5.15.0", _Transformer


MIGRATION = LoggingDir()
