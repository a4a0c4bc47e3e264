"""reward-tokenized-columns: TRL 0.x RewardTrainer's pre-tokenized pair columns (gone in TRL 0.24), marked.

Up to 0.23 `RewardTrainer` trained on datasets a script had tokenized itself into `input_ids_chosen`,
`attention_mask_chosen`, `input_ids_rejected`, `attention_mask_rejected`, and its `RewardDataCollatorWithPadding` handed
exactly those keys to `compute_loss` (read from the 0.23.1 wheel's `reward_trainer.py` and `trainer/utils.py`). The
0.24 refactor (#4093) replaced both: the trainer tokenizes `chosen`/`rejected` text itself or takes pre-tokenized
`chosen_ids`/`rejected_ids` (1.16 `RewardTrainer._prepare_dataset`), and its collator gives one `input_ids` /
`attention_mask` batch, chosen rows then rejected rows. A dataset with the old columns fails in the trainer's
constructor (`KeyError: 'chosen'`), and a `compute_loss` override reading the old keys fails on its first batch.

No rewrite is provably the same (the old masks may pad, an override's loss would need rewriting), so the rule marks
the first statement of each function (or of the module) that names an old column, and each `...Trainer(...)` call
given a `train_dataset=`/`eval_dataset=` in such a file (where the constructor fails). Only files that import `trl`
are looked at; a docstring or comment that mentions a column is not a column name.
"""

from __future__ import annotations

import libcst as cst

from migrations.base import MigrationTransformer, PythonMigration, RuleContext
from migrations.kinds.cst import dotted, string_value
from migrations.kinds.imports import imports_trl

_COLUMNS = frozenset({"input_ids_chosen", "attention_mask_chosen", "input_ids_rejected", "attention_mask_rejected"})
_COLUMN_MSG = ("TRL 0.x reward columns (input_ids_chosen, ...): TRL 0.24+ RewardTrainer reads chosen/rejected text or "
               "chosen_ids/rejected_ids, and its collator gives input_ids/attention_mask (chosen rows, then rejected)")
_TRAINER_MSG = ("RewardTrainer data in TRL 0.x columns: rename them to chosen_ids/rejected_ids (masks are built) or "
                "keep chosen/rejected text")


class _Transformer(MigrationTransformer):
    def __init__(self, rule: PythonMigration, ctx: RuleContext) -> None:
        super().__init__(rule, ctx)
        self._scopes: list[bool] = [False]  # per enclosing function (module first): already marked?

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.append(False)

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        self._scopes.pop()
        return updated_node

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if not self._scopes[-1] and string_value(node) in _COLUMNS:
            self._scopes[-1] = True
            self.todo(node, _COLUMN_MSG)

    def visit_Call(self, node: cst.Call) -> None:
        name = dotted(node.func) or ""
        if name.rsplit(".", 1)[-1].endswith("Trainer") and any(
                a.keyword is not None and a.keyword.value in ("train_dataset", "eval_dataset") for a in node.args):
            self.todo(node, _TRAINER_MSG)


class _Finder(cst.CSTVisitor):
    """Does any string literal (not a docstring) name an old column?"""

    def __init__(self) -> None:
        self.found = False

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if string_value(node) in _COLUMNS:
            self.found = True


class RewardTokenizedColumns(PythonMigration):
    fix_safety = "safe"  # markers only
    summary = "RewardTrainer's TRL 0.x tokenized columns (input_ids_chosen, ...) gone in 0.24 -> marked"
    triggers = tuple(sorted(_COLUMNS))
    requires = ("trl",)

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        module = wrapper.module
        if not imports_trl(module, ("RewardTrainer", "RewardConfig")):
            return module
        finder = _Finder()
        module.visit(finder)
        if not finder.found:
            return module
        t = _Transformer(self, ctx)
        new = wrapper.visit(t)
        return new if t.changed else module


MIGRATION = RewardTokenizedColumns()
