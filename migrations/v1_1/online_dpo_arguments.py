"""online-dpo-arguments: the 0.x `OnlineDPOTrainer`, `XPOTrainer` and `NashMDTrainer` arguments TRL renamed (0.23 -
0.25) or removed (1.1).

Read from the wheels (0.11.4 ... 1.1.0); XPO and Nash-MD subclass Online DPO and followed its changes:
* `reward_model=` -> `reward_funcs=`: TRL 0.23 renamed it and mapped the old keyword onto the new one unchanged
  (`reward_funcs = reward_model`; XPO / Nash-MD forwarded it to Online DPO), 0.25 removed the old name; the rule does
  the same mapping. `reward_processing_class=` -> `reward_processing_classes=` likewise, for Online DPO only (XPO and
  Nash-MD never took `reward_processing_class`);
* `judge=` (and `OnlineDPOConfig`'s judges) went away in 1.1 with `trl.experimental.judges`: marked, scoring goes
  through `reward_funcs` now; a literal `judge=None` (the old default) is dropped;
* positional arguments: 0.12 - 1.0 laid them out as `(model, ref_model, reward_model, judge, args, data_collator,
  train_dataset, eval_dataset, processing_class, ...)`; 1.1 dropped `judge`, so every positional past the third means
  something else now. For Online DPO (which had `judge` fourth from 0.10 on) they are turned into keywords by the old
  layout (up to `processing_class`; a longer positional call is marked, the 0.11 and 0.12 layouts disagree after it).
  XPO and Nash-MD had no `judge` in 0.11 (`(model, ref_model, reward_model, args, ...)`, the 1.1 layout), so which
  parameter a fourth positional means depends on the TRL the code was written for: marked.
Calls are matched by qualified name (every path of `trl` and `trl.experimental.<package>` that held the trainer, and
`compat.trl`, where the 1.14 removal rules point XPO and Nash-MD).
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import QualifiedNameProvider

from migrations.base import MigrationTransformer, PythonMigration
from migrations.kinds.imports import imported_names

_OLD_LAYOUT = ("model", "ref_model", "reward_model", "judge", "args", "data_collator", "train_dataset", "eval_dataset",
               "processing_class")


def _paths(trainer: str, package: str) -> frozenset[str]:
    return frozenset({f"trl.{trainer}", f"trl.trainer.{trainer}", f"trl.trainer.{package}_trainer.{trainer}",
                      f"trl.experimental.{package}.{trainer}", f"trl.experimental.{package}.{package}_trainer.{trainer}",
                      f"compat.trl.{trainer}"})


# trainer -> (its qualified paths, its renamed keywords, the old positional layout or None when the eras disagree)
_TRAINERS: dict[str, tuple[frozenset[str], dict[str, str], tuple[str, ...] | None]] = {
    "OnlineDPOTrainer": (_paths("OnlineDPOTrainer", "online_dpo"),
                         {"reward_model": "reward_funcs", "reward_processing_class": "reward_processing_classes"},
                         _OLD_LAYOUT),
    "XPOTrainer": (_paths("XPOTrainer", "xpo"), {"reward_model": "reward_funcs"}, None),
    "NashMDTrainer": (_paths("NashMDTrainer", "nash_md"), {"reward_model": "reward_funcs"}, None),
}


class _Transformer(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        names = imported_names(self, original_node.func)  # none for a node the rule built: left as is
        trainer = next((t for t, (paths, _, _) in _TRAINERS.items() if names & paths), None)
        if trainer is None:
            return updated_node
        _, renamed, layout = _TRAINERS[trainer]
        args = list(updated_node.args)
        positional = [i for i, a in enumerate(args) if a.keyword is None and not a.star]
        if any(a.star for a in args):
            if any(i >= 3 for i in positional):
                self.todo(original_node, f"{trainer}: positionals past the third mean other parameters "
                                         "since TRL 1.1: pass them by keyword")
            positional = []
        if layout is None:
            if any(i >= 3 for i in positional):
                self.todo(original_node, f"{trainer}: positionals past the third are ambiguous (the fourth was judge "
                                         "in TRL 0.12 - 1.0, args before and since): pass them by keyword")
            positional = []
        elif positional and positional[-1] >= len(layout):
            self.todo(original_node, f"{trainer}: too many positionals for a safe rewrite: pass them by keyword")
            return updated_node
        given = {x.keyword.value for x in args if x.keyword is not None}
        out: list[cst.Arg] = []
        for i, a in enumerate(args):
            if a.keyword is not None:
                name = a.keyword.value
            elif i >= 3 and i in positional:
                name = layout[i]
            else:
                out.append(a)  # model, ref_model, reward_model (now reward_funcs) kept their positions
                continue
            if name == "judge" and isinstance(a.value, cst.Name) and a.value.value == "None":
                continue  # judge=None was the default: dropping it is exact
            if name == "judge":
                self.todo(original_node, f"{trainer}(judge=) was removed in TRL 1.1: score with reward_funcs")
            new = renamed.get(name, name)
            if new != name and new in given:
                self.todo(original_node, f"{trainer} gets both {name}= and {new}=: keep {new}")
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
        self.note(original_node, f"{trainer} arguments renamed (reward_model -> reward_funcs, ...) / "
                                 "positionals past the third passed by keyword")
        return updated_node.with_changes(args=out)


class OnlineDpoArguments(PythonMigration):
    summary = "OnlineDPOTrainer/XPOTrainer/NashMDTrainer(reward_model=, old positionals, ...) -> reward_funcs=, ...; " \
              "judge= marked"
    triggers = ("OnlineDPOTrainer", "XPOTrainer", "NashMDTrainer")
    requires = ("trl",)
    transformer = _Transformer


MIGRATION = OnlineDpoArguments()
