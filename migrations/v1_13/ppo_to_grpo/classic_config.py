"""ppo-to-grpo: the step-loop PPOConfig of a project's own copy of the step-loop PPOTrainer.

A project that keeps a copy of TRL 0.4 - 0.11's PPOTrainer (a class on `BaseTrainer`: yongzhuo/chatglm-maths's
models/ppo_trainer.py, Learning2Interact's mytrl/ppo_trainer.py) feeds it TRL's step-loop `PPOConfig`, which TRL 0.12
gave to another class and 1.13 removed. trl-compat keeps that config as `compat.trl.ClassicPPOConfig` (0.11.4's fields,
defaults and checks, tested against its wheel). Its defaults are 0.11.4's; releases before 0.7.11 had others
(`batch_size` 256, `mini_batch_size` 1, `learning_rate` 1e-5, `target_kl` 0.1 before 0.7.2; the tracking-only fields
`model_name`, `query_dataset`, `reward_model` are left as they are), and code written for them built the config
without those keywords. So each call of the config here gets, as keywords, the defaults of the TRL releases the file
could have run on (the atlas and the project's pin: `defaults`) where they differ from 0.11.4's; where those releases
disagree, the call is marked (pin trl, or set the keyword). A config the file never builds itself (a subclass
instantiated elsewhere, a parser) is marked at the import when the defaults may differ.
"""

from __future__ import annotations

import dataclasses
import functools
import os

import libcst as cst

from migrations.base import MigrationTransformer, PythonMigration, RuleContext
from migrations.kinds.cst import append_items, make_kwarg, names_in, parse_expr
from migrations.v1_13.ppo_to_grpo import defaults

#: every path TRL's step-loop PPOConfig was importable under (0.4 - 0.11: the atlas, held by a test)
CLASSIC_CONFIG_PATHS = ("trl.PPOConfig", "trl.trainer.PPOConfig", "trl.trainer.ppo_config.PPOConfig",
                        "trl.trainer.ppo_trainer.PPOConfig")
NAME = "ClassicPPOConfig"


@functools.cache
def compat_defaults() -> dict[str, object]:
    """The defaults of `compat.trl.ClassicPPOConfig`, read from its source (the rule never imports torch)."""
    import ast
    from pathlib import Path

    import compat

    source = (Path(compat.__file__).parent / "_trainer_utils.py").read_text(encoding="utf-8")
    node = next(n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == NAME)
    out: dict[str, object] = {}
    for stmt in node.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            try:
                out[stmt.target.id] = ast.literal_eval(stmt.value)
            except ValueError:
                continue  # `dataclasses.field(...)`, `os.path...`: the same in every release that had the field
    return out


#: fields whose old default changes nothing the trainer does: tracking only (TRL's docs say so of `model_name`,
#: `query_dataset`, `reward_model`), computed by the trainer itself in every release (`backward_batch_size`), or
#: False and None, both off (`optimize_cuda_cache`); `target_kl` counts only where `early_stopping` is on
_NO_EFFECT = frozenset({"model_name", "query_dataset", "reward_model", "backward_batch_size", "optimize_cuda_cache"})


@functools.cache
def changed_fields() -> tuple[str, ...]:
    """The fields whose default some classic release (0.4 - 0.11) had otherwise than compat's copy, and which change
    what the trainer does (the atlas): `batch_size`, `mini_batch_size`, `learning_rate`, `target_kl`."""
    ours = compat_defaults()
    out = set()
    for release in defaults._atlas().releases():
        for field, source in (defaults.ppo_fields(release, "classic", False) or {}).items():
            value = defaults._value(source)
            if field in ours and value is not defaults._NO_VALUE and value != ours[field]:
                out.add(field)
    return tuple(sorted(out - _NO_EFFECT))


@dataclasses.dataclass
class _Defaults:
    """What a config built without some keywords holds on the releases the file could run on."""

    add: dict[str, object]  # field -> the value to write out
    unknown: list[str]  # "field: why"


def _defaults_for(passed: set[str], path: str | None, imports: set[str], early_stopping: bool = False) -> _Defaults:
    pinned = defaults.pinned_releases(os.path.dirname(os.path.abspath(path))) if path else None
    known = set(compat_defaults()) | {"tracker_kwargs", "accelerator_kwargs", "project_kwargs",
                                      "push_to_hub_if_best_kwargs"}
    releases = defaults.admitted_releases("classic", False, pinned, passed & known, imports)
    out = _Defaults({}, [])
    for field in changed_fields():
        if field in passed or field == "target_kl" and not early_stopping:
            continue
        value = defaults.field_default(field, releases, "classic", False)
        if isinstance(value, defaults.Unknown):
            why = value.why.removeprefix("its default differs across the TRL releases this file could run on ")
            out.unknown.append(f"{field} {why.removesuffix(': pin trl')}")
        elif value != compat_defaults().get(field):
            out.add[field] = value
    return out


class _Transformer(MigrationTransformer):
    def __init__(self, rule: PythonMigration, ctx: RuleContext, imports: set[str]) -> None:
        super().__init__(rule, ctx)
        self.imports = imports
        self.configs = {NAME}  # the names of the config and of the module's classes on it
        self.built = False  # a call of one of them
        self.handed = False  # one of them handed to a call (a parser builds it: `HfArgumentParser((Config, ...))`)

    def visit_Arg(self, node: cst.Arg) -> None:
        self.handed = self.handed or bool(names_in(node.value) & self.configs)

    def visit_Call(self, node: cst.Call) -> bool:
        # `isinstance(config, ClassicPPOConfig)`, `cast(...)`: a check, not a build
        return not (isinstance(node.func, cst.Name) and node.func.value in ("isinstance", "issubclass", "cast"))

    def visit_Module(self, node: cst.Module) -> None:
        for stmt in node.body:
            if isinstance(stmt, cst.ClassDef) and any(isinstance(b.value, cst.Name) and b.value.value in self.configs
                                                      for b in stmt.bases):
                self.configs.add(stmt.name.value)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if not isinstance(original_node.func, cst.Name) or original_node.func.value not in self.configs:
            return updated_node
        self.built = True
        if any(a.star for a in original_node.args):
            found = _defaults_for(set(), self.ctx.path, self.imports)
            if found.add or found.unknown:
                self.todo(original_node, "this config is built with a * / ** splat: ClassicPPOConfig has TRL "
                          "0.11's defaults; set every one of " + ", ".join(sorted([*found.add, *(
                              u.split(" ")[0] for u in found.unknown)])) + " the splat does not, to the value of the "
                          "TRL release the code ran on")
            return updated_node
        passed = {a.keyword.value for a in original_node.args if a.keyword is not None}
        early = next((a.value for a in original_node.args if a.keyword is not None
                      and a.keyword.value == "early_stopping"), None)
        stopping = early is not None and not (isinstance(early, cst.Name) and early.value in ("False", "None"))
        found = _defaults_for(passed, self.ctx.path, self.imports, stopping)
        if found.unknown:
            self.todo(original_node, "ClassicPPOConfig has TRL 0.11's defaults, and the releases this code may have "
                      "run on had others: " + "; ".join(found.unknown) + ". Pin trl, or set these keywords")
        if not found.add:
            return updated_node
        self.note(original_node, "wrote out the defaults of the TRL releases this code ran on where TRL 0.11's "
                  "(compat.trl.ClassicPPOConfig) differ: " + ", ".join(f"{k}={v!r}" for k, v in found.add.items()))
        new = [make_kwarg(k, parse_expr(repr(v))) for k, v in found.add.items()]
        return updated_node.with_changes(args=append_items(list(updated_node.args), new))


def write_defaults(rule: PythonMigration, wrapper: cst.MetadataWrapper, ctx: RuleContext,
                   imports: set[str]) -> cst.Module:
    """Each call of `ClassicPPOConfig` (or of the module's subclass of it) in the module gets the old defaults as
    keywords, or a marker (module docstring); the import is marked when the module never builds the config and its
    defaults may differ. `imports`: the TRL imports of the module as it was (the releases it could run on)."""
    t = _Transformer(rule, ctx, imports)
    module = wrapper.visit(t)
    if t.built or not (t.handed or len(t.configs) > 1):  # built here, or not by this module (an annotation, a check)
        return module
    found = _defaults_for(set(), ctx.path, imports)
    if not found.add and not found.unknown:
        return module
    differ = [f"{k}={v!r}" for k, v in found.add.items()] + found.unknown
    return _mark_import(rule, module, ctx, "ClassicPPOConfig has TRL 0.11's defaults; on the TRL releases this code "
                        "may have run on they were: " + "; ".join(differ) + ". Pin trl, or set them where the config "
                        "is built")


def _mark_import(rule: PythonMigration, module: cst.Module, ctx: RuleContext, message: str) -> cst.Module:
    class _Mark(MigrationTransformer):
        def leave_ImportFrom(self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom) -> cst.ImportFrom:
            if not isinstance(updated_node.names, cst.ImportStar) and any(
                    a.name.value == NAME for a in updated_node.names if isinstance(a.name, cst.Name)):
                self.todo(original_node, message)
            return updated_node

    return cst.MetadataWrapper(module, unsafe_skip_copy=True).visit(_Mark(rule, ctx))
