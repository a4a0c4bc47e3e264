"""logging-dir: `TrainingArguments(logging_dir=d)` (and a TRL config's) after transformers 5.15 removed the field.

The facts (read from the wheels): in transformers 4.56.2 - 5.14 `logging_dir` is read by one thing only, the
TensorBoard callback (`TensorBoardCallback`: `log_dir = args.logging_dir`), which runs when `report_to` names
`tensorboard` (or `all`, which takes every installed integration); `report_to`'s default was `all` in 4.x and is
`"none"` since 5.0. 5.15 removed the field (a `TypeError`); TensorBoard's folder comes from the environment variable
`TENSORBOARD_LOGGING_DIR` there (default `<output_dir>/runs/<timestamp>`).

So where TensorBoard cannot run on 5.15+ the keyword is dead there, and the rule writes, in a call whose callee
resolves to `transformers.TrainingArguments` (or `Seq2SeqTrainingArguments`) or to a TRL config whose `report_to=`
is absent (the 5.x default, `"none"`; with no `*` / `**` splat that may carry it) or a literal that names neither
`tensorboard` nor `all`:

* where the repository's own transformers pin admits no release older than 5.15, or `report_to=` is such a literal
  (TensorBoard never ran on 4.x either) and the module never reads `.logging_dir` back: the keyword dropped;
* otherwise `**tensorboard_dir(d)` from `compat.trl` (`compat.trl._tensorboard_dir`): `logging_dir=d` where the
  installed `TrainingArguments` still has the field (the call is the original one, TensorBoard included on 4.x),
  nothing on 5.15+. The splat sits where the keyword was, so the evaluation order is the written one.

Where TensorBoard may run (`report_to=` naming `tensorboard` or `all`, not a literal, or absent beside a splat that
may carry it) the rule writes `**tensorboard_dir(d, tensorboard=True)`: the original keyword up to 5.14; on 5.15+ the
folder set as `TENSORBOARD_LOGGING_DIR`, the environment variable 5.15's `TensorBoardCallback` reads when the Trainer
is built, after its config (read in the 5.24 wheel: `os.getenv("TENSORBOARD_LOGGING_DIR")` in `__init__`,
`os.path.expanduser` as 4.x's `TrainingArguments` did), so TensorBoard logs where it did. The variable is the
process's, the keyword was the config's: that is the same only while the process has one folder, so the rule writes
it where the module passes `logging_dir=` one value (one call, or calls with the same expression) and never calls
`hyperparameter_search` (whose trial folders 4.x put under `logging_dir` and 5.15 under `output_dir`); otherwise it
marks the call with the fix (set the variable before training). A module that binds `tensorboard_dir` itself is
marked too. A 4.x or 5.0 - 5.14 transformers target never runs the rule.
"""

from __future__ import annotations

import ast

import libcst as cst

from migrations.kinds import grammar
from migrations.kinds.cst import kwarg, literal_value, replace_args
from migrations.kinds.training_args import (
    HelperSplatMigration,
    HelperSplatTransformer,
    config_call,
    foreign_splat,
)

_MISSING = object()
_MARK = ("logging_dir= was removed in transformers 5.15: set the environment variable TENSORBOARD_LOGGING_DIR to this "
         "folder before training, and drop the argument; not rewritten: {why}")


def _one_folder_blocker(code: str) -> str | None:
    """Why `TENSORBOARD_LOGGING_DIR`, one per process, may not stand for this module's `logging_dir=` keywords (None
    when it may): the module sets `logging_dir` to different expressions (a keyword of any call, an assignment to
    `x.logging_dir` or `x["logging_dir"]`, a `{"logging_dir": ...}` key), or runs a hyperparameter search."""
    if "hyperparameter_search" in code:
        return "this module calls hyperparameter_search (5.15 puts trial folders under output_dir, 4.x under logging_dir)"
    try:
        tree = grammar.parse(code)
    except (SyntaxError, ValueError):
        return "the module could not be read"
    values: set[str] = set()
    reads: set[str] = set()  # for each `x.logging_dir = ...`, the read `x.logging_dir` as a keyword would hold it
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            values.update(ast.dump(k.value) for k in node.keywords if k.arg == "logging_dir")
        elif isinstance(node, ast.Dict):
            values.update(ast.dump(v) for k, v in zip(node.keys, node.values)
                          if isinstance(k, ast.Constant) and k.value == "logging_dir")
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Attribute) and target.attr == "logging_dir":
                    reads.add(ast.dump(ast.Attribute(value=target.value, attr="logging_dir", ctx=ast.Load())))
                    values.add(f"assigned at line {node.lineno}")
                elif isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant) \
                        and target.slice.value == "logging_dir":
                    values.add(f"assigned at line {node.lineno}")
    # haf-rm-anonymized/Code-for-HAF-RM: `script_args.logging_dir = script_args.logging_dir.format(...)` on the
    # script's own options, then `DPOConfig(logging_dir=script_args.logging_dir)`: the writes compute the one folder
    # the one keyword passes
    keywords = {v for v in values if not v.startswith("assigned at")}
    if len(keywords) == 1 and reads == keywords:
        values = keywords
    if len(values) > 1:
        return ("this module sets logging_dir to more than one folder, and TENSORBOARD_LOGGING_DIR holds one per "
                "process")
    return None


def _tensorboard_off(report_to: cst.Arg | None) -> str | None:
    """None when TensorBoard cannot run on transformers 5.x with this `report_to=` (absent: the default "none"; a
    literal naming neither "tensorboard" nor "all"), else why it may."""
    if report_to is None:
        return None
    value = literal_value(report_to.value, _MISSING)
    if value is None:  # 4.x read None as "all" (rule report-to-none writes that): TensorBoard when installed
        return "report_to=None was every installed integration, TensorBoard among them"
    names = [value] if isinstance(value, str) else list(value) if isinstance(value, (list, tuple)) else None
    if names is None or not all(isinstance(n, str) for n in names):
        return "report_to= is not a literal (TensorBoard may log to this folder)"
    if {"tensorboard", "all"} & set(names):
        return "report_to= includes TensorBoard, which logs to this folder"
    return None


class _Transformer(HelperSplatTransformer):
    def visit_Module(self, node: cst.Module) -> None:
        code = self.ctx.code if self.ctx.code is not None else node.code
        self.blocker = _one_folder_blocker(code)
        self.reads_back = ".logging_dir" in code  # the module's own use of the folder (`os.makedirs(args.logging_dir)`)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        folder = kwarg(updated_node, "logging_dir")
        if folder is None or not config_call(self, original_node.func, ("logging_dir", "report_to")):
            return updated_node
        args = list(updated_node.args)
        report_to = kwarg(updated_node, "report_to")
        if report_to is not None:  # a splat cannot pass report_to= too (a TypeError): this is the value
            why = _tensorboard_off(report_to)
        elif foreign_splat(self, original_node, {"report_to"}):
            why = "this call has a * or ** splat (it may pass report_to)"
        else:
            why = None  # the 5.x default, "none"
        if why is None and self.plain:
            self.note(original_node, "logging_dir= dropped: only TensorBoard read it, and report_to= leaves it off "
                                     "(the manifest requires transformers>=5.15, which has no such field)")
            return replace_args(updated_node, [a for a in args if a is not folder])
        if why is None and report_to is not None and not self.reads_back:
            # report_to= a literal without TensorBoard: 4.x never ran it either (brevdev/notebooks' report_to="wandb")
            self.note(original_node, "logging_dir= dropped: only TensorBoard read it (4.56.2 - 5.14), and this "
                                     "report_to= never runs TensorBoard")
            return replace_args(updated_node, [a for a in args if a is not folder])
        if why is not None and self.blocker is not None:
            self.todo(original_node, _MARK.format(why=f"{why}, and {self.blocker}"))
            return updated_node
        if not self.helper_ok:
            self.todo(original_node, _MARK.format(why="this module binds a name `tensorboard_dir` of its own"))
            return updated_node
        helper_args = [cst.Arg(folder.value)]
        if why is None:
            message = ("logging_dir= -> **tensorboard_dir(...) (compat.trl: logging_dir= where the installed "
                       "transformers has it; nothing on 5.15+, where report_to= leaves TensorBoard off)")
        else:
            helper_args.append(cst.Arg(cst.Name("True"), keyword=cst.Name("tensorboard"),
                                       equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
            message = (f"logging_dir= -> **tensorboard_dir(..., tensorboard=True) ({why}; compat.trl: logging_dir= "
                       "where the installed transformers has it; on 5.15+ the folder set as TENSORBOARD_LOGGING_DIR, "
                       "which TensorBoard reads when the Trainer is built)")
        helper = cst.Call(cst.Name("tensorboard_dir"), helper_args)
        splat = folder.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT, star="**", value=helper)
        self.needed = True
        self.note(original_node, message)
        return replace_args(updated_node, [splat if a is folder else a for a in args])


class LoggingDir(HelperSplatMigration):
    summary = ("TrainingArguments / TRL config logging_dir= (removed in transformers 5.15) -> **tensorboard_dir(d) "
               "from compat.trl (TENSORBOARD_LOGGING_DIR on 5.15+ where TensorBoard may run)")
    triggers = ("logging_dir",)
    requires = ("transformers", "trl")
    helper, plain_from, transformer = "tensorboard_dir", "5.15.0", _Transformer


MIGRATION = LoggingDir()
