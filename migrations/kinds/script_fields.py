"""Fields that left TRL's script dataclasses (`ModelConfig`, `ScriptArguments`, ...), followed on their instances.

TRL's example scripts, and every repository written on them, build these dataclasses with
`TrlParser((ScriptArguments, SFTConfig, ModelConfig)).parse_args_and_config()` (or `HfArgumentParser`) and read
their fields far from the parser: `model_config.torch_dtype`, `model_args.trust_remote_code`. A field that left the
class is an `AttributeError` at run time there, which no keyword check sees. This module:

* derives from the atlas which fields each class had (TRL 0.7 ... newest) and lacks in the newest release
  (`removed_fields`: `ModelConfig.torch_dtype` 0.27, `ModelConfig.trust_remote_code` 1.7,
  `ScriptArguments.gradient_checkpointing_use_reentrant` 0.27, ...);
* finds their uses on names provably holding an instance (`ScriptFieldUses`: the name is bound once, to a call of
  the class or to its position in a parser's output, resolved by qualified name through
  `migrations.kinds.bindings`, or it is a function parameter annotated with the class and never rebound; a local
  class of the same name, a subclass, a rebound name are not followed), and the keywords of direct constructions;
* is shared by the rules that rewrite them (`ScriptFieldsMigration`, one per release folder of a break; their
  command-line side `ScriptFieldFlags`) and by `trl-compat check` (`script_field_reads`), so both follow the same
  instances.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import ClassVar, Literal

import libcst as cst
from libcst.metadata import (
    ParentNodeProvider,
    PositionProvider,
    QualifiedNameProvider,
    ScopeProvider,
)
from packaging.version import Version

from migrations.base import MigrationTransformer, PythonMigration, RuleContext
from migrations.kinds import grammar
from migrations.kinds.bindings import (
    ConfigBinding,
    config_binding,
    module_class,
    plain_value,
    still_bound,
)
from migrations.kinds.cli_commands import (
    CommandFlagsMigration,
    Verdict,
    parser_classes,
    parser_fields,
    script_path,
)
from migrations.kinds.cst import code, replace_args, side_effect_free
from migrations.kinds.imports import code_words, ensure_imports, imported_names
from migrations.kinds.options import ARGUMENT_PARSERS, PARSE_METHODS, config_paths

__all__ = [
    "SCRIPT_CLASSES",
    "Gone",
    "ScriptFieldFlags",
    "ScriptFieldUses",
    "ScriptFieldsMigration",
    "fix_hint",
    "removed_fields",
    "script_field_reads",
    "triggered",
]

#: short name -> (the path the atlas is asked under, every qualified path it is importable under)
SCRIPT_CLASSES: dict[str, tuple[str, frozenset[str]]] = {
    "ModelConfig": ("trl.ModelConfig", config_paths("ModelConfig", "model_config")),
    "ScriptArguments": ("trl.ScriptArguments", frozenset({
        "trl.ScriptArguments", "trl.scripts.ScriptArguments", "trl.scripts.utils.ScriptArguments",
        "trl.utils.ScriptArguments"})),
    "GRPOScriptArguments": ("trl.scripts.grpo.GRPOScriptArguments", frozenset({"trl.scripts.grpo.GRPOScriptArguments"})),
    "RLOOScriptArguments": ("trl.scripts.rloo.RLOOScriptArguments", frozenset({"trl.scripts.rloo.RLOOScriptArguments"})),
}
_FIRST = Version("0.7.0")
#: field -> its successor field on the same class, same meaning on every release that has it (read in the wheels:
#: 0.23 - 0.26 kept `torch_dtype` as a deprecated field copied into `dtype` by `__post_init__`)
RENAMED = {("ModelConfig", "torch_dtype"): "dtype"}
#: fields whose option moved to the training configs of the same parser (TRL 1.7: `--trust_remote_code` is a field
#: of SFTConfig, DPOConfig, GRPOConfig, ... and TRL's own scripts read `training_args.trust_remote_code`)
MOVED_TO_TRAINING_CONFIG = frozenset({("ModelConfig", "trust_remote_code")})
_HINTS = {
    ("ModelConfig", "torch_dtype"): 'use dtype (default "float32" since 0.27; torch_dtype defaulted to None)',
    "gradient_checkpointing_use_reentrant": "TRL never read it: set the training config's "
                                            'gradient_checkpointing_kwargs={"use_reentrant": ...}',
    "config": "TrlParser reads --config itself: take the path from sys.argv",
}


@dataclass(frozen=True)
class Gone:
    cls: str  # short name ("ModelConfig")
    field: str
    last: str  # the last release (from 0.7) that had it
    removed: str  # the first release without it


@lru_cache(maxsize=1)
def removed_fields() -> dict[str, dict[str, Gone]]:
    """class -> field -> Gone: the fields each script class had in some release from 0.7 and lacks in the newest."""
    from migrations.atlas import Atlas

    atlas = Atlas.load("trl")
    releases = [r for r in atlas.releases() if Version(r) >= _FIRST]
    out: dict[str, dict[str, Gone]] = {}
    for short, (path, _paths) in SCRIPT_CLASSES.items():
        gone: dict[str, Gone] = {}
        previous: tuple[str, set[str]] | None = None
        for release in releases:
            fields = set(atlas.config_fields(release, path) or ()) if atlas.has(release, path) else None
            if fields is None:
                continue
            if previous is not None:
                for name in previous[1] - fields:
                    gone[name] = Gone(short, name, previous[0], release)
                for name in fields & set(gone):
                    del gone[name]  # came back
            previous = (release, fields)
        out[short] = gone
    return out


def _field_names() -> frozenset[str]:
    return frozenset(f for fields in removed_fields().values() for f in fields)


def triggered(text: str) -> bool:
    """A cheap test: the text names a removed field and one of the script classes."""
    return any(f".{f}" in text or f"{f}=" in text for f in _field_names()) and any(c in text for c in SCRIPT_CLASSES)


@lru_cache(maxsize=8)
def training_configs_with(field: str, since: str) -> tuple[str, ...]:
    """TRL config names (`trl.X`) that have `field` on every release from `since` to the newest."""
    from migrations.atlas import Atlas

    atlas = Atlas.load("trl")
    releases = [r for r in atlas.releases() if Version(r) >= Version(since)]
    names = [n for n in atlas.exports(releases[-1], "trl") if n.endswith("Config")] if releases else []
    return tuple(sorted(n for n in names if all(
        atlas.has(r, f"trl.{n}") and field in (atlas.config_fields(r, f"trl.{n}") or {}) for r in releases)))


def fix_hint(gone: Gone, since: str | None = None) -> str:
    """What to do instead of the removed field (`since`: the first release the fix must hold on; default the
    removal release)."""
    if (gone.cls, gone.field) in MOVED_TO_TRAINING_CONFIG:
        configs = training_configs_with(gone.field, since or gone.removed)
        return (f"--{gone.field} now sets {'/'.join(c.removesuffix('Config') for c in configs)}Config."
                f"{gone.field}: read it from that config, or declare it in a dataclass of your own")
    return _HINTS.get((gone.cls, gone.field)) or _HINTS.get(gone.field) or "drop it"


@lru_cache(maxsize=256)
def has_field_from(qualname: str, field: str, release: str) -> bool:
    """Whether TRL's `qualname` has the dataclass field `field` on every release from `release` (or the newest the
    atlas holds, when `release` is newer) to the newest."""
    from migrations.atlas import Atlas

    atlas = Atlas.load("trl")
    return all(atlas.has(r, qualname) and field in (atlas.config_fields(r, qualname) or {})
               for r in _releases_from(release))


@lru_cache(maxsize=64)
def _releases_from(release: str) -> tuple[str, ...]:
    """The atlas's TRL releases from `release` (or the newest it holds, when `release` is newer) to the newest."""
    from migrations.atlas import Atlas

    known = Atlas.load("trl").releases()
    return tuple(r for r in known if Version(r) >= min(Version(release), Version(known[-1])))


#: field -> the reference configs (`reference_impl`'s: what `compat.trl` resolves to where the installed TRL lacks
#: them, and what the judged Online DPO / XPO / Nash-MD files import, `online-dpo-arguments`) that declare it;
#: `tests/migrations/v1_7` holds the table against reference_impl
REFERENCE_CONFIG_FIELDS: dict[str, frozenset[str]] = {
    "trust_remote_code": frozenset({"BCOConfig", "XPOConfig", "NashMDConfig", "PRMConfig", "OnlineDPOConfig"}),
}
#: the paths `reference_impl` exports its configs under (`reference_impl.NAME`, `reference_impl.trainers.NAME`)
_REFERENCE_PACKAGES = ("reference_impl.", "reference_impl.trainers.")


def reference_has_field(qualname: str, field: str) -> bool:
    """Whether `qualname` is a reference config (`reference_impl.OnlineDPOConfig`) that declares `field`: this
    project's own class, the same on every TRL release."""
    return any(qualname.startswith(p) and qualname.removeprefix(p) in REFERENCE_CONFIG_FIELDS.get(field, ())
               for p in _REFERENCE_PACKAGES)


@lru_cache(maxsize=256)
def compat_has_field_from(qualname: str, field: str, release: str) -> bool:
    """Whether `qualname` is a config with `field` on every release from `release` on: `reference_impl.NAME` whose
    class declares it (the same class on every TRL), or `compat.trl.NAME` whatever it resolves to there: on each
    release the first of its TRL candidates the release has (`compat.trl` takes TRL's class where the installed TRL
    has one) must have the field (the atlas), and where the release has none, the reference config must declare it
    (`REFERENCE_CONFIG_FIELDS`)."""
    from compat._exports import trl_paths
    from migrations.atlas import Atlas

    if qualname.startswith("reference_impl."):
        return reference_has_field(qualname, field)
    name = qualname.removeprefix("compat.trl.")
    if not qualname.startswith("compat.trl."):
        return False
    atlas = Atlas.load("trl")
    for r in _releases_from(release):
        trl = next((q for q in trl_paths(name) if atlas.has(r, q)), None)
        if trl is None and name not in REFERENCE_CONFIG_FIELDS.get(field, ()):
            return False
        if trl is not None and field not in (atlas.config_fields(r, trl) or {}):
            return False
    return True


#: the transformers release the migrated manifests require at least (TRL 1.13's floor): the fields a parser sees
_TRANSFORMERS_FROM = "4.56.2"
#: parse-method keywords (or a second positional) that change the shape of the output tuple
_SHAPE_KEYWORDS = frozenset({"return_remaining_strings", "fail_with_unknown_args"})
#: the class `model-config-trust-remote-code` appends to a parser whose other classes lack the option
APART_CLASS = "TrustRemoteCodeArguments"


@lru_cache(maxsize=64)
def library_fields(qualname: str, release: str) -> frozenset[str] | None:
    """Every field the TRL or transformers dataclass `qualname` has on some release from `release` (TRL) or from
    `_TRANSFORMERS_FROM` (transformers) to the newest in the atlas; None when some such release does not know it as
    a dataclass (absent, or not one)."""
    from migrations.atlas import Atlas

    if not qualname.startswith(("trl.", "transformers.")):
        return None
    package, start = ("trl", release) if qualname.startswith("trl.") else ("transformers", _TRANSFORMERS_FROM)
    atlas = Atlas.load(package)
    out: set[str] = set()
    for r in atlas.releases():
        if Version(r) < Version(start):
            continue
        fields = atlas.config_fields(r, qualname)
        if fields is None:
            return None
        out.update(fields)
    return frozenset(out)


@lru_cache(maxsize=64)
def compat_own_fields(qualname: str) -> frozenset[str] | None:
    """The fields of a `compat.trl` dataclass that is trl-compat's own on every TRL (its only candidate a `compat`
    module: `OnPolicyConfig`, `DPOScriptArguments`, ...), read from its source with `ast` (nothing imported), its
    bases of the same module and a transformers `TrainingArguments` base (`library_fields`) included; None for
    anything else."""
    from compat._exports import TRL_CANDIDATES

    if not qualname.startswith("compat.trl."):
        return None
    found = TRL_CANDIDATES.get(qualname.removeprefix("compat.trl."), ())
    if len(found) != 1 or not found[0][0].startswith("compat."):
        return None
    module, name = found[0]
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return None
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    classes = {c.name: c for c in tree.body if isinstance(c, ast.ClassDef)}
    imported = {a.asname or a.name: f"{n.module}.{a.name}" for n in tree.body if isinstance(n, ast.ImportFrom)
                and n.module for a in n.names}

    def fields(cls_name: str, depth: int = 0) -> set[str] | None:
        cls = classes.get(cls_name)
        if cls is None or depth > 5:
            return None
        out = {n.target.id for n in cls.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
        for base in cls.bases:
            if not isinstance(base, ast.Name):
                return None
            more = fields(base.id, depth + 1) if base.id in classes else \
                library_fields(imported.get(base.id, ""), _TRANSFORMERS_FROM)
            if more is None:
                return None
            out |= more
        return out

    result = fields(name)
    return frozenset(result) if result is not None else None


@dataclass(frozen=True)
class Apart:
    """`model_args.trust_remote_code` where no other class of the parser's tuple declares the option on the target:
    `TrustRemoteCodeArguments` is appended to the `classes` tuple and `name` to the unpacking `target`."""

    name: str
    classes: cst.Tuple | cst.List
    target: cst.Tuple | cst.List


@dataclass(frozen=True)
class FieldUse:
    """`node` (`x.field`) on a name holding an instance of `gone.cls`, or a keyword `field=` of its construction."""

    node: cst.CSTNode  # the Attribute, or the Call for a keyword
    gone: Gone
    binding: ConfigBinding | None  # None for a keyword
    context: Literal["read", "write", "delete", "keyword"]
    arg: cst.Arg | None = None


class ScriptFieldUses(cst.CSTVisitor):
    """Collects the uses of removed fields of TRL's script dataclasses on provable instances (see the module)."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider, ScopeProvider, ParentNodeProvider)

    def __init__(self) -> None:
        super().__init__()
        self.removed = removed_fields()
        self.names = _field_names()
        self.uses: list[FieldUse] = []

    def _qnames(self, node: cst.CSTNode) -> set[str]:
        return imported_names(self, node)

    def class_of(self, node: cst.CSTNode) -> str | None:
        qnames = self._qnames(node)
        return next((c for c, (_p, paths) in SCRIPT_CLASSES.items() if qnames & paths), None)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        field = node.attr.value
        if field not in self.names or not isinstance(node.value, cst.Name):
            return
        binding = config_binding(self, node.value, self._qnames) or self._annotated(node.value)
        cls = self.class_of(binding.cls) if binding is not None else None
        gone = self.removed.get(cls or "", {}).get(field)
        if gone is None:
            return
        parent = self.get_metadata(ParentNodeProvider, node, None)
        context: Literal["read", "write", "delete"] = "read"
        if isinstance(parent, (cst.AssignTarget, cst.AugAssign)) and parent.target is node or \
                isinstance(parent, cst.AnnAssign) and parent.target is node:
            context = "write"
        elif isinstance(parent, cst.Del) and parent.target is node:
            context = "delete"
        self.uses.append(FieldUse(node, gone, binding, context))

    def _annotated(self, name: cst.Name) -> ConfigBinding | None:
        """A function parameter annotated with the class (`def main(model_args: ModelConfig)`) and never rebound."""
        scope = self.get_metadata(ScopeProvider, name, None)
        found = [a for a in scope[name.value] if hasattr(a, "node")] if scope is not None else []
        if len(found) != 1:
            return None
        param = found[0].node
        if not isinstance(param, cst.Param):
            param = self.get_metadata(ParentNodeProvider, param, None)
        if not isinstance(param, cst.Param) or param.annotation is None or param.name.value != name.value:
            return None
        # the function's other parameters are the siblings (a `training_args: SFTConfig` beside it)
        params = self.get_metadata(ParentNodeProvider, param, None)
        siblings = [*params.posonly_params, *params.params, *params.kwonly_params] \
            if isinstance(params, cst.Parameters) else [param]
        return ConfigBinding([p.name.value for p in siblings],
                             [p.annotation.annotation if p.annotation is not None else p.name for p in siblings],
                             siblings.index(param), tuple(p.name for p in siblings))

    def visit_Call(self, node: cst.Call) -> None:
        if not any(a.keyword is not None and a.keyword.value in self.names for a in node.args):
            return
        cls = self.class_of(node.func)
        for arg in node.args:
            gone = self.removed.get(cls or "", {}).get(arg.keyword.value if arg.keyword is not None else "")
            if gone is not None:
                self.uses.append(FieldUse(node, gone, None, "keyword", arg))


def script_field_reads(text: str) -> list[tuple[int, int, Gone]]:
    """(line, 1-based column, Gone) of every attribute use of a removed script-class field on a provable instance
    in `text` (what `trl-compat check` holds against its target; keywords of constructions it checks already)."""
    if not triggered(text):
        return []
    try:
        wrapper = cst.MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
    except (cst.ParserSyntaxError, RecursionError):
        return []
    visitor = ScriptFieldUses()
    wrapper.visit(visitor)
    positions = wrapper.resolve(PositionProvider)
    out = []
    for use in visitor.uses:
        if use.context != "keyword":
            start = positions[use.node].start
            out.append((start.line, start.column + 1, use.gone))
    return out


def _none_test(t: cst.MetadataDependent, node: cst.CSTNode) -> bool:
    """Whether the value of `node` is tested against None or for truth (its default changed from None)."""
    parent = t.get_metadata(ParentNodeProvider, node, None)
    if isinstance(parent, cst.Comparison) and any(
            isinstance(c.operator, (cst.Is, cst.IsNot, cst.Equal, cst.NotEqual))
            and isinstance(c.comparator, cst.Name) and c.comparator.value == "None" for c in parent.comparisons):
        return True
    if isinstance(parent, cst.Comparison) and any(  # `x in ["auto", None]`, TRL's own scripts' dtype test
            isinstance(c.operator, (cst.In, cst.NotIn)) and isinstance(c.comparator, (cst.List, cst.Tuple, cst.Set))
            and any(isinstance(e.value, cst.Name) and e.value.value == "None" for e in c.comparator.elements)
            for c in parent.comparisons):
        return True
    if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not):
        return True
    if isinstance(parent, cst.BooleanOperation):
        return True
    return isinstance(parent, (cst.If, cst.While, cst.IfExp)) and getattr(parent, "test", None) is node


class _Transformer(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider, ScopeProvider, ParentNodeProvider)

    def __init__(self, rule: ScriptFieldsMigration, ctx: RuleContext, uses: list[FieldUse]) -> None:
        super().__init__(rule, ctx)
        self.script_rule = rule
        self.attrs = {id(u.node): u for u in uses if u.context != "keyword"}
        self.calls: dict[int, list[FieldUse]] = {}
        for use in uses:
            if use.context == "keyword":
                self.calls.setdefault(id(use.node), []).append(use)
        self.holders: dict[int, str | None] = {}  # id(read) -> the training config's name (`_training_config`)
        self.apart: dict[int, Apart] = {}  # id(read) -> the class appended to its parser (`_apart`)
        self.apart_nodes: dict[int, tuple[str, Apart]] = {}  # id(tuple) -> ("classes" | "target", its plan)
        self.needed: list[tuple[str, str]] = []

    def visit_Module(self, node: cst.Module) -> None:
        """The reads `_apart` answers edit the parser's tuple and the unpacking, both above the read: planned first."""
        plans: dict[int, Apart | None] = {}  # per unpacking statement
        for use in self.attrs.values():
            if (use.gone.cls, use.gone.field) not in MOVED_TO_TRAINING_CONFIG or use.context != "read":
                continue
            assert isinstance(use.node, cst.Attribute)
            holder = self.holders[id(use.node)] = self._training_config(use.node, use)
            if holder is not None or use.binding is None or not use.binding.targets:
                continue
            key = id(use.binding.targets[0])
            if key not in plans:
                plans[key] = self._apart(use, node)
            plan = plans[key]
            if plan is not None:
                self.apart[id(use.node)] = plan
                self.apart_nodes[id(plan.classes)] = ("classes", plan)
                self.apart_nodes[id(plan.target)] = ("target", plan)

    def _message(self, gone: Gone, what: str, hint: str) -> str:
        return f"{what} is gone since TRL {gone.removed}: {hint}"

    def _hint(self, gone: Gone) -> str:
        return fix_hint(gone, self.script_rule.since)

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        use = self.attrs.get(id(original_node))
        if use is None:
            return updated_node
        gone, what = use.gone, f"{code(original_node)}"
        new = RENAMED.get((gone.cls, gone.field))
        if new is not None:
            self.note(original_node, f"{what} -> .{new} ({gone.cls}.{gone.field} removed in TRL {gone.removed})")
            if use.context == "read" and _none_test(self, original_node):
                self.todo(original_node, f"{gone.cls}.{new} defaults to \"float32\" since TRL 0.27 ({gone.field} "
                                         "defaulted to None): this test no longer sees None unless --dtype is None")
            return updated_node.with_changes(attr=cst.Name(new))
        if (gone.cls, gone.field) in MOVED_TO_TRAINING_CONFIG and use.context == "read":
            holder = self.holders.get(id(original_node))
            if holder is not None:
                self.note(original_node, f"{what} -> {holder}.{gone.field} (--{gone.field} is parsed into the "
                                         f"training config since TRL {gone.removed})")
                return updated_node.with_changes(value=cst.Name(holder))
            apart = self.apart.get(id(original_node))
            if apart is not None:
                self.note(original_node, f"{what} -> {apart.name}.{gone.field} (--{gone.field}, gone from "
                                         f"{gone.cls} in TRL {gone.removed}, is parsed into compat.trl."
                                         f"{APART_CLASS}: no other class of the parser declares it)")
                return updated_node.with_changes(value=cst.Name(apart.name))
        self.todo(original_node, self._message(gone, f"{gone.cls}.{gone.field}", self._hint(gone)))
        return updated_node

    def _class_names(self, node: cst.BaseExpression, field: str, depth: int = 0) -> set[str]:
        """The qualified names of the class `node` names; for a class this module defines once at its top level
        (`class CustomPPOConfig(GRPOConfig)`, a base other rules may have rewritten) whose body does not declare
        `field` itself, the names of its bases: it inherits the field, and the option, from them."""
        names = imported_names(self, node)
        if names:
            return self._through_local_classes(names, field)
        if not isinstance(node, cst.Name) or depth > 3:
            return names
        cls = module_class(self, node)
        if cls is None:
            return set()
        if re.search(rf"\b{re.escape(field)}\b", code(cls.body)):
            return set()
        return {q for base in cls.bases if base.keyword is None for q in self._class_names(base.value, field, depth + 1)}

    def _through_local_classes(self, names: set[str], field: str) -> set[str]:
        """`names` with each class of the repository's other modules (the run's `LocalClasses` index: `from
        open_r1.configs import GRPOConfig`, `class GRPOConfig(trl.GRPOConfig)`; a relative import through the file's
        path) replaced by the library bases of its lineage, when no class on that lineage declares `field` itself: it
        inherits the field, and the option."""
        local = self.ctx.options.local_classes
        if local is None:
            return names
        out: set[str] = set()
        for name in names:
            cls = local.find_in(self.ctx.path, name)  # `from ..configs import X` (libcst: `..configs.X`) too
            if cls is None:
                out.add(name)
                continue
            name = cls.qname
            classes, outside = local.lineage(name)
            if not any(field in c.fields for c in classes):
                out.update(outside)
        return out

    def _has_field(self, node: cst.BaseExpression, field: str, target: str) -> bool:
        """Whether the class `node` names has `field` on every release from `target` on (TRL's per the atlas, a
        `compat.trl` / reference config, a local class inheriting it); a union annotation (`SFTConfig | GRPOConfig`,
        `Union[...]`) when every member does (`None` in it never does)."""
        if isinstance(node, cst.Name) and node.value == "None":
            return False
        members = self._union_members(node)
        if members is not None:
            return all(self._has_field(m, field, target) for m in members)
        return any(has_field_from(q, field, target) if q.startswith("trl.") else compat_has_field_from(q, field, target)
                   for q in self._class_names(node, field))

    def _union_members(self, node: cst.BaseExpression) -> list[cst.BaseExpression] | None:
        """The members of `A | B` or `typing.Union[A, B]` (`Optional[A]` is `A | None`); None for anything else."""
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
            return [*(self._union_members(node.left) or [node.left]), *(self._union_members(node.right) or [node.right])]
        if isinstance(node, cst.Subscript) and imported_names(self, node.value) & {"typing.Union", "typing.Optional"}:
            members = [e.slice.value for e in node.slice if isinstance(e.slice, cst.Index)]
            optional = "typing.Optional" in imported_names(self, node.value)
            return [*members, cst.Name("None")] if optional else members
        return None

    def _training_config(self, node: cst.Attribute, use: FieldUse) -> str | None:
        """The name the same parser's training config is unpacked into, when exactly one other class of the tuple is
        a TRL class with the field on every release from the target on, and that name means that unpacking here."""
        binding = use.binding
        if binding is None or len(binding.classes) < 2:
            return None
        target = self.ctx.options.atlas_trl
        holders = [i for i, c in enumerate(binding.classes)
                   if i != binding.index and self._has_field(c, use.gone.field, target)]
        if len(holders) != 1:
            return None
        name, target = binding.names[holders[0]], binding.targets[holders[0]]
        if name is None or not isinstance(node.value, cst.Name):
            return None
        # the holder's name, looked up in the scope of the read, must mean that unpacking's target
        scope = self.get_metadata(ScopeProvider, node.value, None)
        found = [a.node for a in scope[name] if hasattr(a, "node")] if scope is not None else []
        if len(found) > 1 and target in found:  # rebound later: `reward_config = RewardConfig(...)` after the read
            return name if still_bound(self, node.value, target, [n for n in found if n is not target]) else None
        node = found[0] if len(found) == 1 else None
        return name if node is target or isinstance(node, cst.Param) and node.name is target else None

    def _apart(self, use: FieldUse, module: cst.Module) -> Apart | None:
        """The plan for a read of `ModelConfig.trust_remote_code` whose parser has no other class with the option on
        the target: the unpacking `a, b, model_args = parser.parse_*()` (every target a plain name, no keyword
        changing the output's shape), the parser a name bound once to `HfArgumentParser(...)` / `TrlParser(...)`
        and used only there (or built inline), its tuple written out (or a name bound once and used only there),
        every other class of it proven to lack the field (`_known_fields`), and a free name for the new target.
        Appending `TrustRemoteCodeArguments` keeps `--trust_remote_code` (default False) and a `--config` key."""
        binding, field = use.binding, use.gone.field
        assert binding is not None
        if any(n is None for n in binding.names) or len(binding.targets) != len(binding.names):
            return None
        element = self.get_metadata(ParentNodeProvider, binding.targets[0], None)
        target = self.get_metadata(ParentNodeProvider, element, None) if element is not None else None
        if not isinstance(target, (cst.Tuple, cst.List)) or [e.value for e in target.elements] != list(binding.targets):
            return None
        assign_target = self.get_metadata(ParentNodeProvider, target, None)
        assign = self.get_metadata(ParentNodeProvider, assign_target, None) if assign_target is not None else None
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1 or assign.targets[0].target is not target:
            return None
        call = assign.value
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                and call.func.attr.value in PARSE_METHODS):
            return None
        if any(a.star or a.keyword is not None and a.keyword.value in _SHAPE_KEYWORDS for a in call.args) \
                or sum(a.keyword is None for a in call.args) > 1:
            return None
        parser = call.func.value
        built = plain_value(self, parser, read_once=True) if isinstance(parser, cst.Name) else parser
        if not isinstance(built, cst.Call) or not built.args or built.args[0].keyword is not None \
                or not imported_names(self, built.func) & ARGUMENT_PARSERS:
            return None
        classes = built.args[0].value
        if isinstance(classes, cst.Name):
            classes = plain_value(self, classes, read_once=True)
        if not isinstance(classes, (cst.Tuple, cst.List)) or [e.value for e in classes.elements] != binding.classes:
            return None
        release = self.ctx.options.atlas_trl
        for i, cls in enumerate(binding.classes):
            known = self._known_fields(cls, field, release) if i != binding.index else frozenset()
            if known is None or field in known:
                return None
        words = code_words(module.code)
        if APART_CLASS in words:
            return None
        name = next(n for n in ("remote_code_args", *(f"remote_code_args_{i}" for i in range(2, 99)))
                    if n not in words)
        return Apart(name, classes, target)

    def _known_fields(self, node: cst.BaseExpression, field: str, release: str, depth: int = 0) -> frozenset[str] | None:
        """Every field the class `node` names may have from `release` on, when all of them are known: a TRL or
        transformers dataclass (the atlas), a `compat.trl` class of trl-compat's own, a class of the repository (the
        run's index of other modules, every base on the way resolved; or a class this module defines once at its
        top level: its annotated names, `field` too when its body mentions it at all, and its bases'); None else."""
        if depth > 5:
            return None
        names = imported_names(self, node)
        if len(names) == 1:
            return self._fields_of(next(iter(names)), release, depth)
        if names or not isinstance(node, cst.Name):
            return None
        cls = module_class(self, node)
        if cls is None or cls.keywords or any(b.keyword is not None or b.star for b in cls.bases):
            return None
        out = {s.target.value for line in cls.body.body if isinstance(line, cst.SimpleStatementLine)
               for s in line.body if isinstance(s, cst.AnnAssign) and isinstance(s.target, cst.Name)}
        if re.search(rf"\b{re.escape(field)}\b", code(cls.body)):
            out.add(field)
        for base in cls.bases:
            more = self._known_fields(base.value, field, release, depth + 1)
            if more is None:
                return None
            out |= more
        return frozenset(out)

    def _fields_of(self, qname: str, release: str, depth: int) -> frozenset[str] | None:
        if qname.startswith(("trl.", "transformers.")):
            return library_fields(qname, release)
        if qname.startswith("compat.trl."):
            return compat_own_fields(qname)
        local = self.ctx.options.local_classes
        cls = local.find_in(self.ctx.path, qname) if local is not None else None
        if cls is None or depth > 5:
            return None
        classes, outside = local.lineage(cls.qname)
        if any(c.opaque for c in classes):
            return None
        out = {f for c in classes for f in c.fields}
        for base in outside:
            more = self._fields_of(base, release, depth + 1)
            if more is None:
                return None
            out |= more
        return frozenset(out)

    def _appended(self, node: cst.Tuple | cst.List, value: cst.BaseExpression) -> cst.Tuple | cst.List:
        """`node` with `value` as its last element, in the layout of the elements before it."""
        elements = list(node.elements)
        last = elements[-1]
        if isinstance(last.comma, cst.Comma):  # a trailing comma: the new element takes it, the old last the one
            between = elements[-2].comma if len(elements) > 1 and isinstance(elements[-2].comma, cst.Comma) \
                else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))  # before it
            elements[-1] = last.with_changes(comma=between)
            elements.append(cst.Element(value, comma=last.comma))
        else:
            elements[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            elements.append(cst.Element(value))
        return node.with_changes(elements=elements)

    def _leave_sequence(self, original: cst.Tuple | cst.List, updated: cst.Tuple | cst.List) -> cst.BaseExpression:
        found = self.apart_nodes.get(id(original))
        if found is None:
            return updated
        role, plan = found
        if role == "target":
            return self._appended(updated, cst.Name(plan.name))
        self.needed.append(("compat.trl", APART_CLASS))
        self.changed = True
        return self._appended(updated, cst.Name(APART_CLASS))

    def leave_Tuple(self, original_node: cst.Tuple, updated_node: cst.Tuple) -> cst.BaseExpression:
        return self._leave_sequence(original_node, updated_node)

    def leave_List(self, original_node: cst.List, updated_node: cst.List) -> cst.BaseExpression:
        return self._leave_sequence(original_node, updated_node)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        uses = self.calls.get(id(original_node))
        if not uses:
            return updated_node
        keywords = {a.keyword.value for a in original_node.args if a.keyword is not None}
        renamed: dict[str, str] = {}
        dropped: set[str] = set()
        for use in uses:
            gone, arg = use.gone, use.arg
            assert arg is not None
            new = RENAMED.get((gone.cls, gone.field))
            if new is not None and new not in keywords:
                renamed[gone.field] = new
                self.note(original_node, f"{gone.cls}({gone.field}=) -> {new}= (removed in TRL {gone.removed})")
            elif new is not None:
                self.todo(original_node, f"both {gone.field}= and {new}= are passed: keep {new}=")
            elif side_effect_free(arg.value):
                dropped.add(gone.field)
                self.todo(original_node, self._message(gone, f"{gone.cls}({gone.field}=)", f"dropped (it was "
                                                       f"{code(arg.value)}); {self._hint(gone)}"))
            else:
                self.todo(original_node, self._message(gone, f"{gone.cls}({gone.field}=)", self._hint(gone)))
        args = [a.with_changes(keyword=cst.Name(renamed[a.keyword.value]))
                if a.keyword is not None and a.keyword.value in renamed else a
                for a in updated_node.args if a.keyword is None or a.keyword.value not in dropped]
        return replace_args(updated_node, args) if dropped else updated_node.with_changes(args=args)


class ScriptFieldsMigration(PythonMigration):
    """A rule for the script-class fields removed in its release folder's release (`removed_fields`): renamed ones
    rewritten (reads, writes, keywords), moved ones pointed at the config that parses them now, the rest marked."""

    requires: ClassVar[tuple[str, ...]] = ("trl",)

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        collector = ScriptFieldUses()
        wrapper.visit(collector)
        uses = [u for u in collector.uses if self.owns(u.gone)]
        if not uses:
            return wrapper.module
        t = _Transformer(self, ctx, uses)
        module = wrapper.visit(t)
        if t.needed:
            module = ensure_imports(module, t.needed)
        return module if t.changed else wrapper.module

    @property
    def since(self) -> str:
        """The release of the break: the rule's folder, as the atlas spells it (`1.7` -> `1.7.0`)."""
        return f"{self.release}.0" if self.release.count(".") == 1 else self.release

    def owns(self, gone: Gone) -> bool:
        return Version(gone.removed).release[:2] == Version(self.since).release[:2]

    @property
    def triggers(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(sorted({g.field for fields in removed_fields().values() for g in fields.values()
                             if self.owns(g)}))


def _short(path: str) -> str | None:
    return next((c for c, (_p, paths) in SCRIPT_CLASSES.items() if path in paths), None)


class ScriptFieldFlags(CommandFlagsMigration):
    """The command-line side of a `ScriptFieldsMigration`: `--torch_dtype` passed to a script whose parser holds a
    TRL script class that lost the field in this rule's release folder (shell launchers, fenced blocks of
    Markdown). A flag the target parser still accepts is left alone; a renamed field's flag becomes its successor's
    when the parser accepts that; any other is marked above the command (`migrations.kinds.cli_commands`)."""

    requires: ClassVar[tuple[str, ...]] = (".py",)
    patterns: ClassVar[tuple[str, ...]] = ("*.sh", "*.md")

    since = ScriptFieldsMigration.since
    owns = ScriptFieldsMigration.owns

    @property
    def triggers(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(sorted({f"--{g.field}" for fields in removed_fields().values() for g in fields.values()
                             if self.owns(g)}))

    def judge(self, word: str, flags: list[str], here: Path, ctx: RuleContext) -> Verdict | None:
        from migrations.kinds.pins import committed_text

        path = script_path(word, here)
        text = committed_text(path) if path is not None else None
        if not text or not any(c in text for c in SCRIPT_CLASSES):
            return None
        try:
            tree = grammar.parse(text)
        except SyntaxError:
            return None
        classes = [s for kind, q in parser_classes(tree) or () if kind == "trl" and (s := _short(q))]
        accepted = parser_fields(tree, ctx.options.atlas_trl) if classes else None
        if accepted is None:
            return None
        removed = removed_fields()
        verdict, rejected = Verdict(), []
        for flag in flags:
            name = flag.replace("-", "_")
            gone = next((removed[c][name] for c in classes if name in removed[c]), None)
            if name in accepted or gone is None or not self.owns(gone):
                continue
            new = RENAMED.get((gone.cls, name))
            if new is not None and new in accepted:
                verdict.renames[flag] = new
                verdict.notes[flag] = f"--{flag} -> --{new} ({gone.cls}.{name} removed in TRL {gone.removed})"
            else:
                rejected.append((flag, gone))
        if rejected:
            flag, gone = rejected[0]
            names = ", ".join(f"--{f}" for f, _g in rejected)
            verdict.marker = (f"{word} rejects {names} since TRL {gone.removed} ({gone.cls} lost the field): "
                              f"{fix_hint(gone, self.since)}")
        return verdict if verdict.renames or verdict.marker else None
