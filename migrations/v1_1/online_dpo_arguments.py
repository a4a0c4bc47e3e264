"""online-dpo-arguments: the 0.x `OnlineDPOTrainer`, `XPOTrainer` and `NashMDTrainer` arguments TRL renamed (0.23 -
0.25) or removed (1.1).

Read from the wheels (0.11.4 ... 1.1.0); XPO and Nash-MD subclass Online DPO and followed its changes:
* `reward_model=` -> `reward_funcs=`: TRL 0.23 renamed it and mapped the old keyword onto the new one unchanged
  (`reward_funcs = reward_model`; XPO / Nash-MD forwarded it to Online DPO), 0.25 removed the old name; the rule does
  the same mapping. `reward_processing_class=` -> `reward_processing_classes=` likewise, for Online DPO only (XPO and
  Nash-MD never took `reward_processing_class`);
* `judge=` went away in 1.1 with `trl.experimental.judges`, and no TRL of 1.13 - 1.16 ranks completions with a
  judge. A literal `judge=None` (the old default) is dropped. A file whose `OnlineDPOTrainer(...)` call passes a
  judge gets the trainer that still takes one: its TRL `OnlineDPOTrainer` and `OnlineDPOConfig` (every import form;
  attribute uses too) come from `reference_impl` instead (`reference_impl.OnlineDPOTrainer(judge=)` ranks the two
  completions of each prompt with the judge exactly as TRL 1.0 did; its config is TRL 1.16's plus 1.0's `judge`
  field), and the call stays as it is. Why the pair and why `reference_impl`: the trainer must get the config class
  of its own implementation (given TRL's config it converts it field by field, `_coerce_args`), and `compat.trl`
  has nothing to route between: no target line has a judge-capable trainer, while `compat.trl.OnlineDPOTrainer`
  must stay TRL's for every file that does not judge (those keep TRL's class). Not routed, marked instead: a file that
  subclasses TRL's trainer (the subclass relies on TRL's internals) and a judge passed to `compat.trl`'s class.
  `reward_model=` with `judge=` is marked too: up to TRL 0.22 the reward model won when both were set, from 0.23 (and
  in TRL 1.0, so here) the judge wins, and the code does not say which it was written for. XPO and Nash-MD: TRL 1.13's
  (and so the reference ones) take no judge: `judge=` is marked, scoring goes through `reward_funcs`;
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

from migrations.base import (
    Migration,
    MigrationTransformer,
    PythonMigration,
    RuleContext,
)
from migrations.kinds.imports import imported_names
from migrations.kinds.symbols import Moved, SymbolMigration

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
# TRL's own Online DPO trainer and config (not compat.trl's): what a judging file routes to reference_impl
_TRL_PATHS = _TRAINERS["OnlineDPOTrainer"][0] - {"compat.trl.OnlineDPOTrainer"}
_TRL_CONFIG_PATHS = {"trl.OnlineDPOConfig", "trl.trainer.OnlineDPOConfig", "trl.trainer.online_dpo_config.OnlineDPOConfig",
                     "trl.experimental.online_dpo.OnlineDPOConfig",
                     "trl.experimental.online_dpo.online_dpo_config.OnlineDPOConfig"}


class _Transformer(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def __init__(self, rule: Migration, ctx: RuleContext) -> None:
        super().__init__(rule, ctx)
        self.judged: list[cst.Call] = []  # calls of TRL's trainer that pass a judge, to route to reference_impl
        self._subclassed: bool | None = None  # does a class of the file derive from TRL's trainer (read once)
        self._module: cst.Module | None = None

    def visit_Module(self, node: cst.Module) -> None:
        self._module = node

    def subclassed(self) -> bool:
        """A class of the file derives from TRL's trainer: it relies on TRL's internals, so nothing is routed."""
        if self._subclassed is None:
            classes: list[cst.ClassDef] = []

            class _Classes(cst.CSTVisitor):
                def visit_ClassDef(self, node: cst.ClassDef) -> None:
                    classes.append(node)

            if self._module is not None:
                self._module.visit(_Classes())
            self._subclassed = any(imported_names(self, b.value) & _TRL_PATHS for c in classes for b in c.bases)
        return self._subclassed

    def _judge(self, call: cst.Call, names: set[str], given: set[str]) -> None:
        """A judge passed to `call`: routed to reference_impl (by the rule, after this pass) or marked."""
        if "reward_model" in given:
            self.todo(call, "judge= wins over reward_model= since TRL 0.23; up to 0.22 the reward model won when "
                            "both were set: pass only one")
        if names & _TRL_PATHS and not self.subclassed():
            self.judged.append(call)
        elif names & _TRL_PATHS:
            self.todo(call, "judge= needs reference_impl.OnlineDPOTrainer (TRL dropped it in 1.1); this file "
                            "subclasses TRL's trainer: port the subclass to reference_impl's")
        else:
            self.todo(call, "judge= needs reference_impl.OnlineDPOTrainer (TRL dropped it in 1.1): import it and "
                            "OnlineDPOConfig from reference_impl")

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
                if trainer == "OnlineDPOTrainer":
                    self._judge(original_node, names, given)
                else:
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


class _ToReference(SymbolMigration):
    """The second pass, for a file whose call passes a judge: TRL's `OnlineDPOTrainer` / `OnlineDPOConfig` ->
    `reference_impl`'s (not a rule of its own: `MIGRATION` below runs it)."""

    summary = "TRL's OnlineDPOTrainer/OnlineDPOConfig -> reference_impl's (judge=)"
    symbols = {**{p: Moved("reference_impl", "OnlineDPOTrainer", "TRL 1.0's judge=") for p in _TRL_PATHS},
               **{p: Moved("reference_impl", "OnlineDPOConfig") for p in _TRL_CONFIG_PATHS}}


_TO_REFERENCE = _ToReference()


class OnlineDpoArguments(PythonMigration):
    summary = "OnlineDPOTrainer/XPOTrainer/NashMDTrainer(reward_model=, old positionals, ...) -> reward_funcs=, " \
              "...; OnlineDPOTrainer(judge=) -> reference_impl's trainer and config, XPO/Nash-MD judge= marked"
    triggers = ("OnlineDPOTrainer", "XPOTrainer", "NashMDTrainer")
    requires = ("trl",)

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        visitor = _Transformer(self, ctx)
        module = wrapper.visit(visitor)
        if not visitor.judged:
            return module if visitor.changed else wrapper.module
        return _TO_REFERENCE.transform(cst.MetadataWrapper(module, unsafe_skip_copy=True),
                                       RuleContext(ctx.options, ctx.path, ctx.findings))


MIGRATION = OnlineDpoArguments()
