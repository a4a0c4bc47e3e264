"""config-defaults: TRL config defaults that changed under code relying on them, written out or marked.

From TRL 0.12 on, the trainers' configs stopped inheriting four TrainingArguments defaults (read from every wheel by
`_config_defaults_gen.py`, data in `_config_defaults_data.py`): `learning_rate` (0.12: SFT 2e-5, DPO/ORPO/CPO/KTO 1e-6;
0.24: Reward 1e-4), `logging_steps` (0.19: 10), `bf16` (0.19: None = on where supported) and `gradient_checkpointing`
(0.22: True). A 0.8-era `ORPOConfig(output_dir=...)` silently trains with another learning rate, in bf16, with
gradient checkpointing, on TRL 1.16 (and fails on a CPU without bf16).

For each call of `SFTConfig`, `DPOConfig`, `RewardConfig`, `KTOConfig`, `ORPOConfig`, `CPOConfig` (resolved by
qualified name, old and experimental paths alike) that does not set one of these fields and has no `**kwargs`, the
rule reads the repository's TRL pin (the nearest `requirements*.txt` / `pyproject.toml` / `setup.py` / `setup.cfg`
above the file, as committed in git when the file is tracked, so a manifest rewritten in the same run does not hide
the old pin), takes the releases the pin admits, and:

* every admitted release had the same default, and the target's differs: the old default is written out
  (`learning_rate=5e-05`), which is provably what the user got;
* the admitted releases disagree (an open pin such as `trl>=0.8`): a marker naming the fields to decide;
* the pin admits only releases with the target's defaults: nothing;
* no pin found: the call's own keywords are the evidence when some TRL field it passes no release from the target on
  declares (`SFTConfig(max_seq_length=...)` ran on 0.9 - 0.19, `DPOConfig(max_prompt_length=...)` before 0.29): the
  releases declaring all of them stand for the pin, as above (jonhpark7966/FineTuning_Course's notebooks, no manifest:
  `gradient_checkpointing=False` written out, 0.22 turned it on); a call every newer release takes is no evidence,
  unless the module imports a TRL name the target lacks: the last release that had it bounds the releases the module
  ran on (AMindToThink/interpretable-fine-tuning's `from trl import DataCollatorForCompletionOnlyLM`, last in 0.19.1:
  `gradient_checkpointing=False` written out; learning_rate, logging_steps and bf16, which changed within 0.9 - 0.19,
  marked).
"""

from __future__ import annotations

import functools
from pathlib import Path

import libcst as cst
from libcst.metadata import QualifiedNameProvider
from packaging.version import Version

from migrations.base import MigrationTransformer, PythonMigration, RuleContext
from migrations.kinds.cst import dotted, make_kwarg, parse_expr, replace_args
from migrations.kinds.imports import imported_names
from migrations.kinds.pins import pinned
from migrations.v0_12._config_defaults_data import HISTORY, RELEASES

ANCHOR = "config-defaults"
_STEM = {"SFTConfig": ("sft_config", ""), "DPOConfig": ("dpo_config", ""), "RewardConfig": ("reward_config", ""),
         "KTOConfig": ("kto_config", "kto"), "ORPOConfig": ("orpo_config", "orpo"), "CPOConfig": ("cpo_config", "cpo")}


def _paths() -> dict[str, str]:
    out: dict[str, str] = {}
    for name, (stem, pkg) in _STEM.items():
        for p in (f"trl.{name}", f"trl.trainer.{name}", f"trl.trainer.{stem}.{name}", f"compat.trl.{name}"):
            out[p] = name
        if pkg:
            out[f"trl.experimental.{pkg}.{name}"] = out[f"trl.experimental.{pkg}.{stem}.{name}"] = name
    return out


_CONFIG_PATHS = _paths()


def default_at(config: str, field: str, release: Version) -> object:
    """The default of `config.field` in TRL `release` (the last change at or before it)."""
    value: object = None
    for first, v in HISTORY[config][field]:
        if Version(first) <= release:
            value = v
    return value


@functools.lru_cache(maxsize=256)
def releases_taking(config: str, keywords: frozenset[str]) -> tuple[str, ...]:
    """The releases (of `RELEASES`) whose `config` declares every TRL field among `keywords` (the atlas; fields TRL
    declared on some release, not the TrainingArguments ones a transformers release decides): the only releases a
    call passing them ran on. `SFTConfig(max_seq_length=...)` ran on 0.9 - 0.19."""
    from migrations.atlas import Atlas

    atlas = Atlas.load("trl")
    stem, pkg = _STEM[config]
    paths = [f"trl.{config}", *([f"trl.experimental.{pkg}.{config}"] if pkg else [])]
    per_release: dict[str, dict] = {}
    for r in RELEASES:
        fields = next((f for f in (atlas.config_fields(r, p) for p in paths) if f is not None), None)
        if fields is not None:
            per_release[r] = fields
    declared = {n for fields in per_release.values() for n, f in fields.items()
                if not f.origin.startswith("transformers.")}
    restricting = keywords & declared
    return tuple(r for r, fields in per_release.items() if restricting <= set(fields))


def import_horizon(module: cst.Module, target: Version) -> tuple[str, Version] | None:
    """(a TRL name this module imports, the last release that had it) for the earliest such last release among the
    names the target lacks (`from trl import DataCollatorForCompletionOnlyLM`: last in 0.19.1): the module as written
    ran on no later release. None when it imports nothing the target lacks (a name no release had, a typo, is no
    evidence)."""
    from migrations.atlas import Atlas

    atlas = Atlas.load("trl")
    best: tuple[str, Version] | None = None
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if not isinstance(small, cst.ImportFrom) or isinstance(small.names, cst.ImportStar) \
                    or small.relative or small.module is None:
                continue
            mod = dotted(small.module) or ""
            if mod != "trl" and not mod.startswith("trl."):
                continue
            for alias in small.names:
                qual = f"{mod}.{dotted(alias.name)}"
                if atlas.has(str(target), qual):
                    continue
                had = [Version(r) for r in RELEASES if atlas.has(r, qual)]
                if had and max(had) < target and (best is None or max(had) < best[1]):
                    best = (qual, max(had))
    return best


@functools.lru_cache(maxsize=256)
def pinned_releases(folder: str) -> tuple[str, ...] | None:
    """The TRL releases the nearest manifest at or above `folder` admits; None when no manifest pins TRL."""
    return pinned(folder, RELEASES)


class _Transformer(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def __init__(self, rule: PythonMigration, ctx: RuleContext, admitted: tuple[str, ...] | None) -> None:
        super().__init__(rule, ctx)
        self.pinned = [Version(r) for r in admitted] if admitted else None
        self.target = Version(ctx.options.target_trl.base_version)
        self.horizon: tuple[str, Version] | None = None

    def _admitted(self, config: str, given: set[str]) -> tuple[list[Version], str]:
        """The releases the call may have run on, and what says so: the repository's pin, else the call's own
        keywords when some of them no release from the target on takes (it was written for an older TRL); else none
        (a call every newer release takes is no evidence of an older default)."""
        if self.pinned is not None:
            return self.pinned, "your pinned TRL"
        taking = [Version(r) for r in releases_taking(config, frozenset(given))]
        if self.horizon is None:
            if not taking or max(taking) >= self.target:
                return [], ""
            return taking, f"the TRL its keywords need ({taking[0]} - {taking[-1]})"
        name, last = self.horizon
        taking = [r for r in taking if r <= last]
        if not taking:
            return [], ""
        return taking, f"the TRL this call ran on ({taking[0]} - {taking[-1]}: the module imports {name}, last in {last})"

    def visit_Module(self, node: cst.Module) -> None:
        if self.pinned is None:
            self.horizon = import_horizon(node, self.target)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        names = imported_names(self, original_node.func)  # none for a node the rule built: left as is
        config = next((_CONFIG_PATHS[n] for n in sorted(names) if n in _CONFIG_PATHS), None)
        if config is None or any(a.star for a in updated_node.args):
            return updated_node
        given = {a.keyword.value for a in updated_node.args if a.keyword is not None}
        admitted, source = self._admitted(config, given)
        if not admitted:
            return updated_node
        write: list[tuple[str, object]] = []
        unsure: list[str] = []
        for field in HISTORY[config]:
            if field in given:
                continue
            new = default_at(config, field, self.target)
            old = {repr(default_at(config, field, r)) for r in admitted
                   if r >= Version(HISTORY[config][field][0][0])}
            if not old or old == {repr(new)}:
                continue
            if len(old) == 1:
                write.append((field, default_at(config, field, admitted[-1])))
            else:
                unsure.append(field)
        if unsure:
            self.todo(original_node, f"set {', '.join(unsure)}: {config} defaults changed since {source}")
        if not write:
            return updated_node
        self.note(original_node, f"{config}: wrote out the defaults of {source}: "
                                 + ", ".join(f"{f}={v!r}" for f, v in write))
        extra = [make_kwarg(f, parse_expr(repr(v))) for f, v in write]
        return replace_args(updated_node, [*updated_node.args, *extra])


class ConfigDefaults(PythonMigration):
    summary = "TRL config defaults changed since the pinned TRL (learning_rate, logging_steps, bf16, " \
              "gradient_checkpointing): written out when provable, else marked"
    triggers = ("Config",)
    requires = ("trl",)

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        if ctx.path is None:
            return wrapper.module
        t = _Transformer(self, ctx, pinned_releases(str(Path(ctx.path).parent)))
        new = wrapper.visit(t)
        return new if t.changed else wrapper.module


MIGRATION = ConfigDefaults()
