"""Reads of TRL training-config fields that the target's class lacks, on provable instances.

A training config is read far from where it is built: `training_args, model_args =
TrlParser((SFTConfig, ModelConfig)).parse_args_and_config()` ... `training_args.max_seq_length`, or a project's own
copy of TRL's RLOO v1 trainer reading `config.sft_model_path` from a `TrlParser((RLOOConfig, ...))` output. When TRL
dropped or renamed the field, that read is an `AttributeError` at run time, which no keyword or import check sees (and
a command line setting it is rejected by the parser). This module finds them for `trl-compat check` (and so for the
`trl-api-leftovers` marker):

* the classes: every `XConfig` TRL defined and exported at its top level from 0.7 on (not peft's configs it
  re-exported), under every path the atlas shows exporting it, except the PPO configs (`ppo-to-grpo` follows their reads) and the script dataclasses
  (`migrations.kinds.script_fields`);
* the fields: those TRL itself declared on the class (a name every release of `transformers.TrainingArguments` lacks
  as a field, method or property) in some release before the target, and the target's class lacks as a field,
  method or property. Fields inherited from `TrainingArguments` break with transformers, not TRL, and are the stack
  rules' business;
* the instances: a name bound once to a call of the class or to its position in a parser's output, or a function
  parameter annotated with the class and never rebound (the resolution of `ScriptFieldUses`,
  `migrations.kinds.bindings`). A local class of the same name, a subclass (which may declare the field), a rebound
  name are not followed.
"""

from __future__ import annotations

from functools import lru_cache

import libcst as cst
from libcst.metadata import PositionProvider
from packaging.version import Version

from migrations.kinds.leftovers import _training_arguments_fields
from migrations.kinds.script_fields import SCRIPT_CLASSES, Gone, ScriptFieldUses

__all__ = ["config_classes", "removed_config_fields", "training_field_reads"]

_FIRST = Version("0.7.0")
#: followed elsewhere: the PPO configs (`ppo-to-grpo` reads their fields far from the config) and the script classes
_NOT_HERE = frozenset({"PPOConfig", "PPOv2Config", *SCRIPT_CLASSES})


@lru_cache(maxsize=1)
def config_classes() -> dict[str, str]:
    """Every qualified path (`trl.trainer.dpo_config.DPOConfig`) a TRL training config was exported under from 0.7
    on -> its short name (`DPOConfig`)."""
    from migrations.atlas import Atlas

    atlas = Atlas.load("trl")
    releases = [r for r in atlas.releases() if Version(r) >= _FIRST]
    names: set[str] = set()
    for release in releases:
        names |= {n for n in atlas.exports(release, "trl") if n.endswith("Config") and n not in _NOT_HERE
                  and atlas.resolve(release, f"trl.{n}") is not None}  # TRL's own class, not peft's re-exported
    out: dict[str, str] = {}
    for release in releases:
        for module in atlas.modules(release):
            if not module.startswith("trl"):
                continue
            for name in names & set(atlas.exports(release, module)):
                out[f"{module}.{name}"] = name
    return out


@lru_cache(maxsize=1)
def _training_arguments_methods() -> frozenset[str]:
    """Every method and property `transformers.TrainingArguments` had in some atlas release (`world_size`,
    `to_dict`, ...): an old TRL config that declared a field of that name (0.11's `OnPolicyConfig.world_size`) still
    answers the read through the property."""
    from migrations.atlas import Atlas

    atlas = Atlas.load("transformers")
    names: set[str] = set()
    for release in atlas.releases():
        info = atlas.class_info(release, "transformers.TrainingArguments") or {}
        names |= set(info.get("methods", ()))
    return frozenset(names)


def _methods(atlas: object, release: str, path: str) -> set[str]:
    """The methods and properties of TRL's class at `path` on `release` and of its TRL bases."""
    out: set[str] = set()
    todo, seen = [path], set()
    while todo:
        info = atlas.class_info(release, todo.pop()) or {}  # type: ignore[attr-defined]
        out |= set(info.get("methods", ()))
        for base in info.get("bases", ()):
            if base.startswith("trl.") and base not in seen:
                seen.add(base)
                todo.append(base)
    return out


@lru_cache(maxsize=64)
def _declared_before(short: str, target: str) -> dict[str, str]:
    """field -> the last release before `target` (from 0.7) whose `short` class declared it (TRL's own fields only:
    those of `transformers.TrainingArguments` left out)."""
    from migrations.atlas import Atlas

    atlas = Atlas.load("trl")
    inherited = _training_arguments_fields() | _training_arguments_methods()
    paths = [p for p, n in config_classes().items() if n == short]
    out: dict[str, str] = {}
    for release in atlas.releases():
        if Version(release) < _FIRST or Version(release) >= Version(target):
            continue
        path = next((p for p in (f"trl.{short}", *sorted(paths)) if atlas.has(release, p)), None)
        for field in (atlas.config_fields(release, path) or {}) if path else ():
            if field not in inherited:
                out[field] = release
    return out


@lru_cache(maxsize=256)
def removed_config_fields(path: str, target: str) -> dict[str, Gone]:
    """field -> Gone for the training config at `path` on TRL `target`: the fields its class declared before the
    target and the target's class lacks; empty when the target has no class at `path` (the import is the problem)."""
    from migrations.atlas import Atlas

    atlas = Atlas.load("trl")
    short = config_classes().get(path)
    if short is None or not atlas.has(target, path):
        return {}
    now = set(atlas.config_fields(target, path) or ())
    if not now:
        return {}  # not read as a dataclass on the target: nothing to hold the reads against
    now |= _methods(atlas, target, path)
    return {f: Gone(short, f, last, target) for f, last in _declared_before(short, target).items() if f not in now}


class _Removed(dict):
    """path -> removed_config_fields(path, target), computed on first use."""

    def __init__(self, target: str) -> None:
        super().__init__()
        self.target = target

    def __missing__(self, path: str) -> dict[str, Gone]:
        self[path] = removed_config_fields(path, self.target) if path else {}
        return self[path]

    def get(self, path: str, default: dict[str, Gone] | None = None) -> dict[str, Gone]:  # type: ignore[override]
        return self[path] if path else (default or {})


class ConfigFieldReads(ScriptFieldUses):
    """The uses (read, write, delete) of removed training-config fields on provable instances (see the module)."""

    def __init__(self, target: str, names: frozenset[str]) -> None:
        cst.CSTVisitor.__init__(self)
        self.removed = _Removed(target)  # keyed by the class's qualified path, not its short name
        self.names = names
        self.uses = []
        self.paths: list[str] = []  # the class's qualified path of each use

    def visit_Attribute(self, node: cst.Attribute) -> None:
        before = len(self.uses)
        super().visit_Attribute(node)
        if len(self.uses) > before:
            binding = self.uses[-1].binding
            self.paths.append((self.class_of(binding.cls) if binding is not None else None) or "")

    def class_of(self, node: cst.CSTNode) -> str | None:
        paths = self._qnames(node) & config_classes().keys()
        return min(paths) if paths else None

    def visit_Call(self, node: cst.Call) -> None:
        return None  # keywords of a construction: the check holds every call against the signature already


@lru_cache(maxsize=1)
def _short_names() -> frozenset[str]:
    return frozenset(config_classes().values())


def _field_names(text: str, target: str) -> frozenset[str]:
    """Every field that a training config named in `text` declared before `target` (the cheap prefilter's words;
    only the classes the text names are read from the atlas)."""
    return frozenset(f for short in _short_names() if short in text for f in _declared_before(short, target))


def training_field_reads(text: str, target: str) -> list[tuple[int, int, str, Gone]]:
    """(line, 1-based column, the class's qualified path, Gone) of every use of a training-config field that TRL
    `target`'s class lacks, on a provable instance in `text`."""
    if "Config" not in text:
        return []
    names = _field_names(text, target)
    if not any(f".{f}" in text for f in names):
        return []
    try:
        wrapper = cst.MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
    except (cst.ParserSyntaxError, RecursionError):
        return []
    visitor = ConfigFieldReads(target, names)
    wrapper.visit(visitor)
    positions = wrapper.resolve(PositionProvider)
    out = []
    for use, path in zip(visitor.uses, visitor.paths, strict=True):
        start = positions[use.node].start
        out.append((start.line, start.column + 1, path, use.gone))
    return out
