"""online-dpo-arguments: the 0.x `OnlineDPOTrainer` arguments TRL renamed (0.23 - 0.25) or removed (1.1).

Read from the wheels (0.12.2 ... 1.1.0):
* `reward_model=` -> `reward_funcs=` and `reward_processing_class=` -> `reward_processing_classes=`: TRL 0.23 renamed
  them and mapped the old keywords onto the new ones unchanged (`reward_funcs = reward_model`), 0.25 removed the old
  names; the rule does the same mapping;
* `judge=` (and `OnlineDPOConfig`'s judges) went away in 1.1 with `trl.experimental.judges`: marked, scoring goes
  through `reward_funcs` now; a literal `judge=None` (the old default) is dropped;
* positional arguments: up to 1.0 the layout was `(model, ref_model, reward_model, judge, args, data_collator,
  train_dataset, eval_dataset, processing_class, ...)`; 1.1 dropped `judge`, so every positional past the third means
  something else now. They are turned into keywords by the old layout (up to `processing_class`; a longer positional
  call is marked, the 0.11 and 0.12 layouts disagree after it).
Calls are matched by qualified name (`trl.OnlineDPOTrainer` and every `trl.experimental.online_dpo` path).
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import QualifiedNameProvider

from migrations.base import MigrationTransformer, PythonMigration
from migrations.kinds.imports import imported_names

_PATHS = {"trl.OnlineDPOTrainer", "trl.trainer.OnlineDPOTrainer", "trl.trainer.online_dpo_trainer.OnlineDPOTrainer",
          "trl.experimental.online_dpo.OnlineDPOTrainer",
          "trl.experimental.online_dpo.online_dpo_trainer.OnlineDPOTrainer", "compat.trl.OnlineDPOTrainer"}
_OLD_LAYOUT = ("model", "ref_model", "reward_model", "judge", "args", "data_collator", "train_dataset", "eval_dataset",
               "processing_class")
_RENAMED = {"reward_model": "reward_funcs", "reward_processing_class": "reward_processing_classes"}


class _Transformer(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        names = imported_names(self, original_node.func)  # none for a node the rule built: left as is
        if not names & _PATHS:
            return updated_node
        args = list(updated_node.args)
        positional = [i for i, a in enumerate(args) if a.keyword is None and not a.star]
        if any(a.star for a in args):
            if any(i >= 3 for i in positional):
                self.todo(original_node, "OnlineDPOTrainer: positionals past the third mean other parameters "
                                         "since TRL 1.1: pass them by keyword")
            positional = []
        if positional and positional[-1] >= len(_OLD_LAYOUT):
            self.todo(original_node, "OnlineDPOTrainer: too many positionals for a safe rewrite: pass them by keyword")
            return updated_node
        given = {x.keyword.value for x in args if x.keyword is not None}
        out: list[cst.Arg] = []
        for i, a in enumerate(args):
            if a.keyword is not None:
                name = a.keyword.value
            elif i >= 3 and i in positional:
                name = _OLD_LAYOUT[i]
            else:
                out.append(a)  # model, ref_model, reward_model (now reward_funcs) kept their positions
                continue
            if name == "judge" and isinstance(a.value, cst.Name) and a.value.value == "None":
                continue  # judge=None was the default: dropping it is exact
            if name == "judge":
                self.todo(original_node, "OnlineDPOTrainer(judge=) was removed in TRL 1.1: score with reward_funcs")
            new = _RENAMED.get(name, name)
            if new != name and new in given:
                self.todo(original_node, f"OnlineDPOTrainer gets both {name}= and {new}=: keep {new}")
                return updated_node
            if a.keyword is not None and new == name:
                out.append(a)
            elif a.keyword is not None:
                out.append(a.with_changes(keyword=cst.Name(new)))
            else:
                out.append(a.with_changes(keyword=cst.Name(new), equal=cst.AssignEqual(
                    whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))))
        if all(x is y for x, y in zip(out, args)):
            return updated_node
        self.note(original_node, "OnlineDPOTrainer arguments renamed (reward_model -> reward_funcs, ...) / "
                                 "positionals past the third passed by keyword")
        return updated_node.with_changes(args=out)


class OnlineDpoArguments(PythonMigration):
    summary = "OnlineDPOTrainer(reward_model=, reward_processing_class=, old positionals) -> reward_funcs=, ...; " \
              "judge= marked"
    triggers = ("OnlineDPOTrainer",)
    requires = ("trl",)
    transformer = _Transformer


MIGRATION = OnlineDpoArguments()
