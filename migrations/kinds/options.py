"""Renamed and removed keywords and config fields: rules that rewrite keyword arguments of TRL calls.

An `OptionMigration` lists `OptionChange`s, each bound to a set of qualified callee names (e.g. every path under which
`GRPOConfig` is importable, and TRL's own subclasses of it). Calls are matched by qualified name through aliases and
every import form; a call of an unrelated `GRPOConfig` (a user's own class) is left alone. Kinds of change:

* rename a keyword (`use_transformers_paged=` -> `use_transformers_continuous_batching=`), refusing with a TODO when
  the new keyword is already passed;
* rename a literal string value (`packing_strategy="bfd-requeue"` -> `"bfd_split"`);
* drop a keyword that did nothing but warn (or refuse a setup) on every release the migrated manifest allows, when its
  value can be dropped unseen: a literal of `drop_literals`, or with none given any value with no side effect and
  no attribute read (`side_effect_free`: literals, names, comparisons, conditional expressions); else TODO;
* TODO only (a deprecated option whose successor needs a human decision).

Callees may also be named by pattern (`callee_prefixes` + `callee_suffixes`: every
`transformers.<...>.from_pretrained`), for the methods of a library's classes.

`config_paths` and the `*_CONFIGS` sets name the qualified paths of TRL's config classes, for any rule that matches
config calls; `ARGUMENT_PARSERS` / `PARSE_METHODS` the parsers that build them from the command line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

import libcst as cst
import libcst.matchers as m
from libcst.metadata import QualifiedNameProvider

from migrations.base import MigrationTransformer, PythonMigration, RuleContext
from migrations.kinds.cst import drop_kwarg, kwarg, literal_value, replace_string, side_effect_free, string_value
from migrations.kinds.imports import imported_names
# the argument parsers and their parse methods live with the index of local classes, which reads them too
from migrations.kinds.local_classes import ARGUMENT_PARSERS, PARSE_METHODS

__all__ = [
    "ARGUMENT_PARSERS", "DPO_CONFIGS", "GRPO_CONFIGS", "KTO_CONFIGS", "REWARD_CONFIGS", "RLOO_CONFIGS", "SFT_CONFIGS", "OptionChange",
    "OptionMigration", "OptionTransformer", "PARSE_METHODS", "config_paths",
]


def config_paths(name: str, module: str, *extra: str) -> frozenset[str]:
    """The qualified names a stable TRL class is importable under: `trl.X`, `trl.trainer.X`, `trl.trainer.mod.X`."""
    return frozenset({f"trl.{name}", f"trl.trainer.{name}", f"trl.trainer.{module}.{name}", *extra})


GRPO_CONFIGS = config_paths("GRPOConfig", "grpo_config", "trl.experimental.gmpo.GMPOConfig",
                            "trl.experimental.gmpo.gmpo_config.GMPOConfig")
RLOO_CONFIGS = config_paths("RLOOConfig", "rloo_config")
SFT_CONFIGS = config_paths("SFTConfig", "sft_config", "trl.experimental.gkd.GKDConfig",
                           "trl.experimental.gkd.gkd_config.GKDConfig", "trl.experimental.gold.GOLDConfig",
                           "trl.experimental.gold.gold_config.GOLDConfig")
DPO_CONFIGS = config_paths("DPOConfig", "dpo_config")
KTO_CONFIGS = config_paths("KTOConfig", "kto_config")
REWARD_CONFIGS = config_paths("RewardConfig", "reward_config")



@dataclass(frozen=True)
class OptionChange:
    """One change to the keyword `key` of calls of `callees` (see the module docstring for the kinds)."""

    callees: frozenset[str]
    key: str
    kind: Literal["rename-key", "rename-value", "drop", "todo"]
    new_key: str = ""
    old_value: str = ""  # rename-value / todo: only this literal value (empty: any value)
    new_value: str = ""
    message: str = ""  # the note (applied) or the TODO text
    skip_values: frozenset[str] = frozenset()  # todo: no marker when the value is one of these qualified names
    skip_zero: bool = False  # todo: no marker for a literal 0 / 0.0 (the option's off value)
    drop_literals: tuple[object, ...] = ()  # drop: only these literal values (empty: any value without side effects)
    todo: str = ""  # drop: the TODO text where the value cannot be dropped
    # callees named by a pattern rather than listed (`transformers.<anything>.from_pretrained`): a qualified name
    # matches when it starts with one of `callee_prefixes` and ends with one of `callee_suffixes`
    callee_prefixes: tuple[str, ...] = ()
    callee_suffixes: tuple[str, ...] = ()
    callee_excludes: tuple[str, ...] = ()  # ... and contains none of these substrings

    def matches(self, qnames: set[str]) -> bool:
        """Whether a call whose callee has these qualified names is one of this change's callees."""
        if qnames & self.callees:
            return True
        return bool(self.callee_prefixes) and any(
            q.startswith(self.callee_prefixes) and q.endswith(self.callee_suffixes)
            and not any(x in q for x in self.callee_excludes) for q in qnames)


class OptionMigration(PythonMigration):
    """A rule defined by a tuple of `OptionChange`s."""

    changes: ClassVar[tuple[OptionChange, ...]] = ()
    requires: ClassVar[tuple[str, ...]] = ("from trl", "import trl")  # every callee is a TRL name

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        t = OptionTransformer(self, ctx)
        module = wrapper.visit(t)
        return module if t.changed else wrapper.module


class OptionTransformer(MigrationTransformer):
    """Applies an `OptionMigration`'s changes to every call whose callee resolves to one of their `callees`."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def __init__(self, rule: OptionMigration, ctx: RuleContext) -> None:
        super().__init__(rule, ctx)
        self.option_rule = rule

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        qnames = imported_names(self, original_node.func)
        if not qnames:
            return updated_node
        call = updated_node
        for change in self.option_rule.changes:
            if not change.matches(qnames):
                continue
            arg = kwarg(call, change.key)
            if arg is None:
                continue
            if change.kind == "rename-key":
                if kwarg(call, change.new_key) is not None:
                    self.todo(original_node, f"both {change.key}= and {change.new_key}= are passed; {change.message}")
                    continue
                new_arg = arg.with_changes(keyword=cst.Name(change.new_key))
                call = call.with_changes(args=[new_arg if a is arg else a for a in call.args])
                self.note(original_node, f"{change.key}= -> {change.new_key}= ({change.message})")
            elif change.kind == "rename-value":
                if not isinstance(arg.value, cst.SimpleString) or string_value(arg.value) != change.old_value:
                    continue
                new_value = replace_string(arg.value, change.new_value)
                call = call.with_changes(args=[arg.with_changes(value=new_value) if a is arg else a for a in call.args])
                self.note(original_node, f'{change.key}="{change.old_value}" -> "{change.new_value}" ({change.message})')
            elif change.kind == "drop":
                if self._droppable(arg.value, change.drop_literals):
                    call = drop_kwarg(call, change.key)
                    self.note(original_node, f"{change.key}= dropped ({change.message})")
                else:
                    self.todo(original_node, change.todo)
            else:  # todo
                if change.old_value and string_value(arg.value) != change.old_value:
                    continue
                original_arg = kwarg(original_node, change.key)
                if change.skip_values and original_arg is not None and \
                        imported_names(self, original_arg.value) & change.skip_values:
                    continue
                if change.skip_zero and isinstance(arg.value, (cst.Integer, cst.Float)) and \
                        float(arg.value.value) == 0:
                    continue
                self.todo(original_node, change.message)
        return call

    @staticmethod
    def _droppable(value: cst.BaseExpression, literals: tuple[object, ...]) -> bool:
        if literals:
            found = literal_value(value, _NOT_LITERAL)
            return found is not _NOT_LITERAL and any(found == v and type(found) is type(v) for v in literals)
        # an attribute read may run a property
        return side_effect_free(value) and not m.findall(value, m.Attribute())


_NOT_LITERAL = object()
