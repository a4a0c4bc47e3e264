"""sft-max-seq-length: `SFTConfig.max_seq_length` (removed in TRL 0.20) -> `max_length`.

TRL 0.16 added `SFTConfig.max_length` and made `max_seq_length` a deprecated alias (`__post_init__` copied it over);
0.20 removed the field (read from the 0.19.1 and 0.20.0 wheels). Same meaning, so the rule renames:

* the keyword of an SFT config call (`SFTConfig`, and its subclasses `GKDConfig` / `GOLDConfig`), resolved by qualified
  name: `SFTConfig(max_seq_length=512)` -> `SFTConfig(max_length=512)`; both passed -> a marker;
* reads and writes of the attribute on objects that provably are SFT configs: a name bound once in the same scope to
  an SFT config call or unpacked from `HfArgumentParser((..., SFTConfig)).parse_*()` / `TrlParser(...)`, and
  `self.args` inside a subclass of `SFTTrainer` (`args.max_seq_length = 1024` -> `args.max_length = 1024`).

Any other `.max_seq_length` is left alone: a script's own dataclass often has a field of that name. CLI flags in shell
scripts (`--max_seq_length`) are not rewritten (see MIGRATION.md).
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import (
    ParentNodeProvider,
    QualifiedNameProvider,
    ScopeProvider,
)

from migrations.base import MigrationTransformer, PythonMigration, RuleContext
from migrations.kinds.bindings import holds_config
from migrations.kinds.imports import imported_names

ANCHOR = "sft-max-seq-length"


def _paths(name: str, module: str, pkg: str = "") -> set[str]:
    out = {f"trl.{name}", f"trl.trainer.{name}", f"trl.trainer.{module}.{name}", f"compat.trl.{name}"}
    if pkg:
        out |= {f"trl.experimental.{pkg}.{name}", f"trl.experimental.{pkg}.{module}.{name}"}
    return out


_CONFIGS = _paths("SFTConfig", "sft_config") | _paths("GKDConfig", "gkd_config", "gkd") | \
    _paths("GOLDConfig", "gold_config", "gold")
_TRAINERS = _paths("SFTTrainer", "sft_trainer") | _paths("GKDTrainer", "gkd_trainer", "gkd")


class _Transformer(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider, ScopeProvider, ParentNodeProvider)

    def __init__(self, rule: PythonMigration, ctx: RuleContext) -> None:
        super().__init__(rule, ctx)
        self._sft_class: list[bool] = []

    def _qnames(self, node: cst.CSTNode) -> set[str]:
        return imported_names(self, node)

    # -- calls --------------------------------------------------------------------------------------------
    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if not self._qnames(original_node.func) & _CONFIGS:
            return updated_node
        keys = {a.keyword.value for a in updated_node.args if a.keyword is not None}
        if "max_seq_length" not in keys:
            return updated_node
        if "max_length" in keys:
            self.todo(original_node, "both max_seq_length= and max_length= given: keep max_length")
            return updated_node
        self.note(original_node, "SFTConfig(max_seq_length=) -> max_length= (renamed in TRL 0.16, alias gone in 0.20)")
        return updated_node.with_changes(args=[
            a.with_changes(keyword=cst.Name("max_length")) if a.keyword is not None
            and a.keyword.value == "max_seq_length" else a for a in updated_node.args])

    # -- attributes ---------------------------------------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._sft_class.append(any(self._qnames(b.value) & _TRAINERS for b in node.bases))

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        self._sft_class.pop()
        return updated_node

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        if original_node.attr.value != "max_seq_length" or not self._is_sft_config(original_node.value):
            return updated_node
        self.note(original_node, ".max_seq_length -> .max_length on an SFT config (field renamed in TRL 0.16-0.20)")
        return updated_node.with_changes(attr=cst.Name("max_length"))

    def _is_sft_config(self, value: cst.BaseExpression) -> bool:
        if isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) and value.value.value == "self" \
                and value.attr.value == "args":
            return bool(self._sft_class) and self._sft_class[-1]
        return holds_config(self, value, _CONFIGS, self._qnames)


class SftMaxSeqLength(PythonMigration):
    summary = "SFTConfig(max_seq_length=) / config.max_seq_length -> max_length (alias removed in 0.20)"
    triggers = ("max_seq_length",)
    requires = ("trl",)
    transformer = _Transformer


MIGRATION = SftMaxSeqLength()
