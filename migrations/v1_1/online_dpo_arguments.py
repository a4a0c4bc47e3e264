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
  in TRL 1.0, so here) the judge wins, and the code does not say which it was written for (XPO and Nash-MD alike).
  XPO and Nash-MD: `reference_impl`'s take TRL 1.0's `judge=` (same ranking / preference, same losses), TRL 1.13's
  does not, and the 1.14 removals point `compat.trl` at the reference ones. A judged call is routed the Online DPO
  way (its trainer and config from `reference_impl`) on every target, whether it names TRL's class or `compat.trl`'s
  (which `experimental-trainer-imports` / the removal rules may have written before this rule runs): on 1.14+ that
  is the very class `compat.trl` gives, on 1.13 the only one that takes a judge, so the file runs on whichever TRL
  is installed. Which `compat.trl` names qualify comes from the atlas (`compat.trl` is reference_impl's on the newest
  TRL); `compat.trl.OnlineDPOTrainer` is TRL's on every line, so it stays marked;
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

from functools import lru_cache
from typing import NamedTuple

import libcst as cst
from libcst.metadata import QualifiedNameProvider

from compat._exports import trl_paths
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


def _paths(name: str, package: str, module: str) -> frozenset[str]:
    """Every TRL path that held `name` (top level, `trl.trainer`, `trl.experimental.<package>`)."""
    return frozenset({f"trl.{name}", f"trl.trainer.{name}", f"trl.trainer.{package}_{module}.{name}",
                      f"trl.experimental.{package}.{name}", f"trl.experimental.{package}.{package}_{module}.{name}"})


class _Trainer(NamedTuple):
    config: str  # the name of its config class (routed with it)
    paths: frozenset[str]  # TRL's paths of the trainer
    configs: frozenset[str]  # TRL's paths of its config
    renamed: dict[str, str]  # its renamed keywords
    layout: tuple[str, ...] | None  # the old positional layout, None when the eras disagree


def _trainer(trainer: str, package: str, renamed: dict[str, str], layout: tuple[str, ...] | None) -> _Trainer:
    config = trainer.removesuffix("Trainer") + "Config"
    return _Trainer(config, _paths(trainer, package, "trainer"), _paths(config, package, "config"), renamed, layout)


_TRAINERS: dict[str, _Trainer] = {
    "OnlineDPOTrainer": _trainer("OnlineDPOTrainer", "online_dpo", {"reward_model": "reward_funcs",
                                                                    "reward_processing_class":
                                                                        "reward_processing_classes"}, _OLD_LAYOUT),
    "XPOTrainer": _trainer("XPOTrainer", "xpo", {"reward_model": "reward_funcs"}, None),
    "NashMDTrainer": _trainer("NashMDTrainer", "nash_md", {"reward_model": "reward_funcs"}, None),
}


@lru_cache(maxsize=8)
def _compat_is_reference(trainer: str) -> bool:
    """Whether `compat.trl.<trainer>` is reference_impl's class on the newest TRL (the atlas: no TRL candidate
    there): XPO and Nash-MD (removed in 1.14), not Online DPO. Such a name routed to reference_impl is the same class
    from the removal on, and before it the only one that takes a judge."""
    from migrations.atlas import Atlas

    atlas = Atlas.load("trl")
    newest = atlas.releases()[-1]
    return not any(atlas.has(newest, q) for q in trl_paths(trainer))


def _routed(trainer: str) -> frozenset[str]:
    """The paths of `trainer` a judged call is routed from: TRL's, and `compat.trl`'s where that is the reference."""
    paths = _TRAINERS[trainer].paths
    return paths | {f"compat.trl.{trainer}"} if _compat_is_reference(trainer) else paths


def _routed_configs(trainer: str) -> frozenset[str]:
    """The paths of its config routed with it (the same rule)."""
    entry = _TRAINERS[trainer]
    return entry.configs | {f"compat.trl.{entry.config}"} if _compat_is_reference(trainer) else entry.configs


class _Transformer(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def __init__(self, rule: Migration, ctx: RuleContext) -> None:
        super().__init__(rule, ctx)
        self.judged: set[str] = set()  # trainers whose TRL calls pass a judge: routed to reference_impl
        self._subclassed: dict[str, bool] = {}  # does a class of the file derive from TRL's trainer (read once)
        self._module: cst.Module | None = None

    def visit_Module(self, node: cst.Module) -> None:
        self._module = node

    def subclassed(self, trainer: str) -> bool:
        """A class of the file derives from TRL's `trainer`: it relies on TRL's internals, so nothing is routed."""
        if trainer not in self._subclassed:
            classes: list[cst.ClassDef] = []

            class _Classes(cst.CSTVisitor):
                def visit_ClassDef(self, node: cst.ClassDef) -> None:
                    classes.append(node)

            if self._module is not None:
                self._module.visit(_Classes())
            paths = _routed(trainer)
            self._subclassed[trainer] = any(imported_names(self, b.value) & paths for c in classes for b in c.bases)
        return self._subclassed[trainer]

    def _judge(self, trainer: str, call: cst.Call, names: set[str], given: set[str]) -> None:
        """A judge passed to `call`: the trainer routed to reference_impl (by the rule, after this pass), or
        marked."""
        if "reward_model" in given:
            self.todo(call, "judge= wins over reward_model= since TRL 0.23; up to 0.22 the reward model won when "
                            "both were set: pass only one")
        paths, config = _routed(trainer), _TRAINERS[trainer].config
        if names & paths and not self.subclassed(trainer):
            self.judged.add(trainer)
        elif names & paths:
            self.todo(call, f"judge= needs reference_impl.{trainer} (TRL dropped it in 1.1); this file "
                            "subclasses TRL's trainer: port the subclass to reference_impl's")
        else:
            self.todo(call, f"judge= needs reference_impl.{trainer} (TRL dropped it in 1.1): import it and "
                            f"{config} from reference_impl")

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        names = imported_names(self, original_node.func)  # none for a node the rule built: left as is
        trainer = next((t for t, e in _TRAINERS.items() if names & (e.paths | {f"compat.trl.{t}"})), None)
        if trainer is None:
            return updated_node
        renamed, layout = _TRAINERS[trainer].renamed, _TRAINERS[trainer].layout
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
                self._judge(trainer, original_node, names, given)
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
        if len(out) == len(args) and all(x is y for x, y in zip(out, args)):  # a trailing judge=None dropped too
            return updated_node
        if out and len(out) < len(args):  # the new last argument ends the call as the old last one did
            out[-1] = out[-1].with_changes(comma=args[-1].comma)
        self.note(original_node, f"{trainer} arguments renamed (reward_model -> reward_funcs, ...) / "
                                 "positionals past the third passed by keyword")
        return updated_node.with_changes(args=out)


def _to_reference(trainer: str) -> SymbolMigration:
    """The second pass, for a file whose `trainer` call passes a judge: TRL's trainer and its config ->
    `reference_impl`'s (not a rule of its own: `MIGRATION` below runs it)."""
    entry = _TRAINERS[trainer]
    config = entry.config

    class _ToReference(SymbolMigration):
        summary = f"TRL's {trainer}/{config} -> reference_impl's (judge=)"
        symbols = {**{p: Moved("reference_impl", trainer, "TRL 1.0's judge=") for p in _routed(trainer)},
                   **{p: Moved("reference_impl", config) for p in _routed_configs(trainer)}}

    return _ToReference()


_TO_REFERENCE = {trainer: _to_reference(trainer) for trainer in _TRAINERS}


class OnlineDpoArguments(PythonMigration):
    summary = "OnlineDPOTrainer/XPOTrainer/NashMDTrainer(reward_model=, old positionals, ...) -> reward_funcs=, " \
              "...; (judge=) -> reference_impl's trainer and config where compat.trl's takes no judge"
    triggers = ("OnlineDPOTrainer", "XPOTrainer", "NashMDTrainer")
    requires = ("trl",)

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        visitor = _Transformer(self, ctx)
        module = wrapper.visit(visitor)
        if not visitor.judged:
            return module if visitor.changed else wrapper.module
        for trainer in sorted(visitor.judged):
            module = _TO_REFERENCE[trainer].transform(cst.MetadataWrapper(module, unsafe_skip_copy=True),
                                                      RuleContext(ctx.options, ctx.path, ctx.findings))
        return module


MIGRATION = OnlineDpoArguments()
