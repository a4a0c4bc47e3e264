"""sft-max-seq-length: `SFTConfig.max_seq_length` (removed in TRL 0.20) -> `max_length`.

TRL 0.16 added `SFTConfig.max_length` and made `max_seq_length` a deprecated alias (`__post_init__` copied it over);
0.20 removed the field (read from the 0.19.1 and 0.20.0 wheels). Same meaning, so the rule renames:

* the keyword of an SFT config call (`SFTConfig`, and its subclasses `GKDConfig` / `GOLDConfig`), resolved by qualified
  name: `SFTConfig(max_seq_length=512)` -> `SFTConfig(max_length=512)`; both passed -> a marker;
* reads and writes of the attribute on objects that provably are SFT configs: a name bound once in the same scope to
  an SFT config call or unpacked from `HfArgumentParser((..., SFTConfig)).parse_*()` / `TrlParser(...)`, and
  `self.args` inside a subclass of `SFTTrainer` (`args.max_seq_length = 1024` -> `args.max_length = 1024`). A write
  after construction did what the rename does only up to 0.15 (0.16 - 0.19 had copied the alias into `max_length` in
  `__post_init__` already, 0.20+ had no such field: AI-Plans/Model-Diffing's notebook ran on 0.25 and set it for
  nothing); unless the repository's trl pin admits only releases before 0.16, it is renamed and marked.

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

from packaging.version import Version

from migrations.base import MigrationTransformer, PythonMigration, RuleContext
from migrations.kinds.bindings import holds_config
from migrations.kinds.imports import imported_names

ANCHOR = "sft-max-seq-length"
#: TRL 0.16 added `max_length` and made `max_seq_length` an alias copied in `__post_init__`
_ALIAS = Version("0.16.0")


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
        parent = self.get_metadata(ParentNodeProvider, original_node, None)
        if isinstance(parent, (cst.AssignTarget, cst.AugAssign)) and not _pinned_before_alias(self.ctx.path):
            self.todo(original_node, "set after the config was built: on TRL 0.16 - 0.19 this changed nothing "
                      "(__post_init__ had copied max_seq_length into max_length already), on 0.20+ it was no field; "
                      "renamed, it now sets the sequence length: keep it only if your TRL was <= 0.15")
        return updated_node.with_changes(attr=cst.Name("max_length"))

    def _is_sft_config(self, value: cst.BaseExpression) -> bool:
        if isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) and value.value.value == "self" \
                and value.attr.value == "args":
            return bool(self._sft_class) and self._sft_class[-1]
        return holds_config(self, value, _CONFIGS, self._qnames)


def _pinned_before_alias(path: str | None) -> bool:
    """The repository's own trl pin (read beside `path`) admits some release before 0.16 and none from 0.16 on: a
    write of `.max_seq_length` after construction set the field the trainer read (it was the field until 0.16)."""
    if not path:
        return False
    from pathlib import Path

    from migrations.atlas import Atlas
    from migrations.kinds.pins import requirement_spec

    spec = requirement_spec(str(Path(path).parent), "trl")
    if spec is None:
        return False
    releases = Atlas.load("trl").releases()
    return any(spec.contains(r, prereleases=True) for r in releases if Version(r) < _ALIAS) and \
        not any(spec.contains(r, prereleases=True) for r in releases if Version(r) >= _ALIAS)


class SftMaxSeqLength(PythonMigration):
    summary = "SFTConfig(max_seq_length=) / config.max_seq_length -> max_length (alias removed in 0.20)"
    triggers = ("max_seq_length",)
    requires = ("trl",)
    transformer = _Transformer


MIGRATION = SftMaxSeqLength()
