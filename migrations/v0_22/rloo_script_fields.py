"""rloo-script-fields: the script-only fields of v1's `RLOOConfig`, read on a parsed config, move to a dataclass of
the script's own.

TRL 0.11 - 0.21 declared `sft_model_path`, `reward_model_path` (default `"EleutherAI/pythia-160m"`) and
`dataset_num_proc` (None) on `RLOOConfig` (through `OnPolicyConfig`) for its example scripts, which load the policy
and the reward model and map the dataset with them; the v1 trainer itself never reads them (no `args.<field>` in
`rloo_trainer.py` of any v1 wheel: `tests/test_rloo_script_fields.py` holds that against the wheels it has). TRL 0.22
dropped the three, so `config.reward_model_path` is an `AttributeError` and `--reward_model_path` a parser error.
Every copy of TRL's `rloo.py` / `rloo_tldr.py` reads them:

    parser = HfArgumentParser((RLOOConfig, ModelConfig))
    config, model_config = parser.parse_args_into_dataclasses()
    policy = AutoModelForCausalLM.from_pretrained(config.sft_model_path)

The rule gives the fields a home the parser fills from the same flags, with the v1 defaults (from the atlas, over the
v1 releases the repository's TRL pin admits), and points the reads there:

    @dataclass
    class RLOOScriptArguments:
        sft_model_path: str = "EleutherAI/pythia-160m"
        ...

    parser = HfArgumentParser((RLOOConfig, ModelConfig, RLOOScriptArguments))
    config, model_config, rloo_script_args = parser.parse_args_into_dataclasses()
    policy = AutoModelForCausalLM.from_pretrained(rloo_script_args.sft_model_path)

A dataclass of the file's own already in the parser's tuple (a `ScriptArguments` defined in the script) takes the
fields instead of a new class. The values are those v1 gave: same flags, same defaults, same YAML keys.

Nothing is rewritten (rule `rloo-v1-to-rloo`, which runs after, marks the reads) unless all of this holds: the config
is one position of the unpacking of `parser.parse_*()` (`HfArgumentParser` / `TrlParser`), every target a plain
name; the parser is built in the file with its tuple written out, bound once and used only by that call (or built
inline); the config's name is bound once and each field is only read, never assigned, deleted or mutated; no other
class of the tuple declares the field (TRL's at the target release, from the atlas; the file's own, from its class
body; the repository's of another module, from the run's index when every base on its way is the repository's own
and resolved: `Options.local_classes`); the target's `RLOOConfig` lacks it; the admitted v1 releases agree on its default; the new names
(`RLOOScriptArguments`, `rloo_script_args`) are free in the file, and `dataclass` is free or `dataclasses.dataclass`.
"""

from __future__ import annotations

import ast
import json
import os
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import (
    GlobalScope,
    ParentNodeProvider,
    QualifiedNameProvider,
    ScopeProvider,
)

from migrations.atlas import Atlas
from migrations.base import MigrationTransformer, PythonMigration, RuleContext
from migrations.kinds.bindings import config_binding, parser_classes
from migrations.kinds.cst import code, dotted
from migrations.kinds.imports import code_words, ensure_imports, imported_names
from migrations.kinds.local_classes import LocalClasses
from migrations.kinds.options import ARGUMENT_PARSERS
from migrations.kinds.pins import pinned
from migrations.v0_22.rloo_v1_to_rloo import RLOO_CONFIG_PATHS, v1_default, v1_releases

#: The fields v1's RLOOConfig declared for its scripts only (never read by the v1 trainer).
SCRIPT_ONLY = ("sft_model_path", "reward_model_path", "dataset_num_proc")
HOST_CLASS = "RLOOScriptArguments"
HOST_VAR = "rloo_script_args"
HOST_COMMENT = "# trl-compat: RLOOConfig fields of TRL 0.11 - 0.21 the script reads (0.22 removed them), v1 defaults"


def _qnames(visitor: cst.MetadataDependent, node: cst.CSTNode) -> set[str]:
    names = imported_names(visitor, node)  # type: ignore[arg-type]
    return names if len(names) == 1 else set()


def _written(visitor: cst.MetadataDependent, node: cst.Attribute) -> bool:
    """Whether `node` is assigned or deleted, not only read (the fields hold a str, an int or None: nothing reached
    through them, `config.sft_model_path.split("/")`, can change them)."""
    child: cst.CSTNode = node
    parent = visitor.get_metadata(ParentNodeProvider, child, None)
    while isinstance(parent, (cst.Element, cst.StarredElement, cst.Tuple, cst.List)):  # `a, config.x = ...`
        child, parent = parent, visitor.get_metadata(ParentNodeProvider, parent, None)
    if isinstance(parent, (cst.AssignTarget, cst.Del)):
        return True
    return isinstance(parent, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor)) and parent.target is child


@dataclass
class _Plan:
    """One parse statement whose RLOO config's script-only fields move."""

    target: cst.Tuple | cst.List
    position: int  # where the new name goes in the unpacking (before a `return_remaining_strings` tail)
    classes: cst.Tuple | cst.List | None  # the parser's tuple, when a new class is appended to it
    host_var: str
    host_class: str
    new_class: bool
    host_node: cst.ClassDef | None = None  # the file's own dataclass that takes the fields
    top: int = 0  # the index in the module's body of the statement that builds the parser (the new class goes above)
    reads: list[cst.Attribute] = field(default_factory=list)
    fields: dict[str, tuple[str, str]] = field(default_factory=dict)  # field -> (annotation, default source)
    why_not: str | None = None


class _Finder(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (QualifiedNameProvider, ScopeProvider, ParentNodeProvider)

    def __init__(self, target: str, releases: tuple[str, ...], words: set[str], local: LocalClasses | None = None,
                 path: str | None = None) -> None:
        super().__init__()
        self.local = local  # the repository's classes of other modules (the run's index), and this file's path
        self.path = path
        self.target = target
        self.releases = releases
        self.words = words
        self.module: cst.Module | None = None
        self.plans: dict[int, _Plan] = {}  # id(parse Assign) -> plan
        self.local_dataclasses: dict[str, cst.ClassDef] = {}
        atlas = Atlas.load("trl")
        self.target_fields = atlas.config_fields(target, "trl.RLOOConfig") or {}
        self.v1_fields = atlas.config_fields(releases[-1], "trl.RLOOConfig") or {}

    def visit_Module(self, node: cst.Module) -> None:
        self.module = node
        for stmt in node.body:
            if isinstance(stmt, cst.ClassDef) and any(
                    dotted(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator)
                    in ("dataclass", "dataclasses.dataclass") for d in stmt.decorators):
                self.local_dataclasses[stmt.name.value] = stmt
        self.optional = self._optional_imported()
        self.dataclass_free = self._dataclass_free()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value not in SCRIPT_ONLY or not isinstance(node.value, cst.Name):
            return
        binding = config_binding(self, node.value, lambda n: _qnames(self, n))
        if binding is None or not (_qnames(self, binding.cls) & RLOO_CONFIG_PATHS) or not binding.targets:
            return
        assign = self._parse_statement(binding.targets[binding.index])
        if assign is None:
            return
        plan = self.plans.get(id(assign))
        if plan is None:
            plan = self._plan(assign, binding.classes)
            self.plans[id(assign)] = plan
        if plan.why_not is not None:
            return
        if _written(self, node):
            plan.why_not = f"{code(node)} is written"
            return
        name = node.attr.value
        if name not in plan.fields:
            have = self._taken_fields(binding.classes, binding.index)
            if name in have:
                plan.why_not = f"another class of the parser declares `{name}`"
                return
            if name in self.target_fields:
                return  # the target has it: nothing to move
            default = v1_default(name, self.releases)
            v1 = self.v1_fields.get(name)
            if default is None or v1 is None:
                plan.why_not = f"the v1 releases disagree on the default of `{name}`"
                return
            plan.fields[name] = (v1.annotation, default)
        plan.reads.append(node)

    def _parse_statement(self, name: cst.CSTNode) -> cst.Assign | None:
        """The `a, config, b = parser.parse_*()` statement binding `name`, when its targets are plain names."""
        element = self.get_metadata(ParentNodeProvider, name, None)
        tup = self.get_metadata(ParentNodeProvider, element, None) if isinstance(element, cst.Element) else None
        target = self.get_metadata(ParentNodeProvider, tup, None) if isinstance(tup, (cst.Tuple, cst.List)) else None
        assign = self.get_metadata(ParentNodeProvider, target, None) if isinstance(target, cst.AssignTarget) else None
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1 or \
                parser_classes(self, assign.value, lambda n: _qnames(self, n)) is None:
            return None
        return assign

    def _plan(self, assign: cst.Assign, classes: list[cst.BaseExpression]) -> _Plan:
        target = assign.targets[0].target
        assert isinstance(target, (cst.Tuple, cst.List))
        call = assign.value
        assert isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
        position = len(classes)
        plan = _Plan(target, position, None, HOST_VAR, HOST_CLASS, True)
        if not all(isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in target.elements):
            plan.why_not = "the unpacking has a target that is not a plain name"
            return plan
        built = self._parser_call(call.func.value)
        if built is None or not built.args or not isinstance(built.args[0].value, (cst.Tuple, cst.List)) or \
                any(isinstance(e, cst.StarredElement) for e in built.args[0].value.elements):
            plan.why_not = "the parser is not built here with its dataclass tuple written out, for this call only"
            return plan
        for i, cls in enumerate(classes):
            own = self._own_dataclass(cls)
            var = target.elements[i].value
            if own is not None and i != self._config_index(classes) and isinstance(var, cst.Name):
                plan.host_var, plan.host_class, plan.host_node, plan.new_class = var.value, own.name.value, own, False
                return plan
        if HOST_CLASS in self.words or HOST_VAR in self.words:
            plan.why_not = f"`{HOST_CLASS}` or `{HOST_VAR}` is taken in the file"
            return plan
        if not self.dataclass_free:
            plan.why_not = "`dataclass` names something else in the file"
            return plan
        plan.classes = built.args[0].value
        plan.top = self._top_index(built)  # the parser is built before (or in) the parse statement
        return plan

    def _top_index(self, node: cst.CSTNode) -> int:
        assert self.module is not None
        parent = self.get_metadata(ParentNodeProvider, node, None)
        while parent is not None and not isinstance(parent, cst.Module):
            node, parent = parent, self.get_metadata(ParentNodeProvider, parent, None)
        return next(i for i, stmt in enumerate(self.module.body) if stmt is node)

    def _own_dataclass(self, cls: cst.BaseExpression) -> cst.ClassDef | None:
        """The module-level `@dataclass` class of this file that the name `cls` is bound to, and only to."""
        if not isinstance(cls, cst.Name) or cls.value not in self.local_dataclasses:
            return None
        return self.local_dataclasses[cls.value] if self._bound_once(cls.value, cst.ClassDef) else None

    def _config_index(self, classes: list[cst.BaseExpression]) -> int:
        return next(i for i, c in enumerate(classes) if _qnames(self, c) & RLOO_CONFIG_PATHS)

    def _module_bindings(self, name: str) -> list[object]:
        """The nodes that bind `name` at module level (imports, classes, assignments)."""
        assert self.module is not None
        scope = self.get_metadata(ScopeProvider, self.module.body[0], None) if self.module.body else None
        return [getattr(a, "node", None) for a in scope.assignments[name]] if isinstance(scope, GlobalScope) else []

    def _bound_once(self, name: str, kind: type) -> bool:
        found = self._module_bindings(name)
        return len(found) == 1 and isinstance(found[0], kind)

    def _parser_call(self, parser: cst.BaseExpression) -> cst.Call | None:
        """The `HfArgumentParser(...)` / `TrlParser(...)` call the parse method runs on: inline, or bound once to a
        name that nothing else uses."""
        if isinstance(parser, cst.Call):
            built = parser
        elif isinstance(parser, cst.Name):
            scope = self.get_metadata(ScopeProvider, parser, None)
            found = [a for a in scope[parser.value] if hasattr(a, "node")] if scope is not None else []
            if len(found) != 1 or len(found[0].references) != 1:
                return None
            assign = self.get_metadata(ParentNodeProvider, self.get_metadata(ParentNodeProvider, found[0].node, None),
                                       None)
            if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
                return None
            built = assign.value  # type: ignore[assignment]
        else:
            return None
        return built if isinstance(built, cst.Call) and _qnames(self, built.func) & ARGUMENT_PARSERS else None

    def _taken_fields(self, classes: list[cst.BaseExpression], config_index: int) -> set[str]:
        """The fields the parser's other classes declare (two classes with one field: argparse's conflict error)."""
        taken: set[str] = set()
        for i, cls in enumerate(classes):
            if i == config_index:
                continue
            own = self._own_dataclass(cls)
            if own is not None:
                taken |= {s.target.value for line in own.body.body if isinstance(line, cst.SimpleStatementLine)
                          for s in line.body if isinstance(s, cst.AnnAssign) and isinstance(s.target, cst.Name)}
                continue
            qnames = _qnames(self, cls)
            qname = qnames.pop() if len(qnames) == 1 else None
            fields = Atlas.load("trl").config_fields(self.target, qname) if qname is not None else None
            if fields is None and qname is not None:
                fields = self._local_fields(qname)
            # a class we cannot read (a transformers one, another package's) may declare any of them
            taken |= set(fields) if fields is not None else set(SCRIPT_ONLY)
        return taken

    def _local_fields(self, qname: str) -> set[str] | None:
        """The fields of a repository class of another module (`from src.configs import DatasetConfig`, sayands/
        noisy-lms; a relative import through this file's path) and of its local bases, when every base on the way
        is the repository's own (a library base, or one the index cannot resolve, may declare anything); None
        otherwise."""
        found = self.local.find_in(self.path, qname) if self.local is not None else None
        if found is None:
            return None
        classes, outside = self.local.lineage(found.qname)
        return None if outside or any(c.opaque for c in classes) else {f for c in classes for f in c.fields}

    def _optional_imported(self) -> bool:
        """`Optional` is bound once at module level, by `from typing import Optional`: the file's spelling."""
        found = self._module_bindings("Optional")
        return len(found) == 1 and isinstance(found[0], cst.ImportFrom) and dotted(found[0].module) == "typing"

    def _dataclass_free(self) -> bool:
        """`dataclass` is unbound at module level, or bound by `from dataclasses import dataclass`."""
        return all(isinstance(node, cst.ImportFrom) and dotted(node.module) == "dataclasses"
                   for node in self._module_bindings("dataclass"))


def _annotation(source: str, optional_imported: bool) -> str:
    """The atlas's annotation text, `Optional[X]` written `X | None` unless the file imports `Optional`."""
    if source.startswith("Optional[") and source.endswith("]") and not optional_imported:
        return f"{source[len('Optional['):-1]} | None"
    return source


def _default(source: str) -> str:
    """A literal default as the files of this era write it (double-quoted strings)."""
    value = ast.literal_eval(source)
    return json.dumps(value) if isinstance(value, str) else source


class _Mover(MigrationTransformer):
    def __init__(self, rule: PythonMigration, ctx: RuleContext, plans: list[_Plan], optional: bool) -> None:
        super().__init__(rule, ctx)
        self.plans = plans
        self.optional = optional
        self.reads = {id(node): plan for plan in plans for node in plan.reads}
        self.targets = {id(plan.target): plan for plan in plans if plan.new_class}
        self.tuples = {id(plan.classes): plan for plan in plans if plan.classes is not None}
        self.hosts = {id(plan.host_node): plan for plan in plans if plan.host_node is not None}

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        plan = self.reads.get(id(original_node))
        if plan is None:
            return updated_node
        self.note(original_node, f"{code(original_node)} -> {plan.host_var}.{original_node.attr.value} "
                                 f"({plan.host_class} field, the v1 RLOOConfig default)")
        return updated_node.with_changes(value=cst.Name(plan.host_var))

    def leave_Tuple(self, original_node: cst.Tuple, updated_node: cst.Tuple) -> cst.BaseExpression:
        return self._extend(original_node, updated_node)

    def leave_List(self, original_node: cst.List, updated_node: cst.List) -> cst.BaseExpression:
        return self._extend(original_node, updated_node)

    def _extend(self, original: cst.Tuple | cst.List, updated: cst.Tuple | cst.List) -> cst.BaseExpression:
        plan = self.targets.get(id(original))
        if plan is not None:  # the unpacking of the parser's output
            return _inserted(updated, plan.position, plan.host_var)
        plan = self.tuples.get(id(original))
        if plan is not None:  # the parser's dataclass tuple
            return _inserted(updated, len(updated.elements), plan.host_class)
        return updated

    def _field_lines(self, fields: dict[str, tuple[str, str]]) -> list[str]:
        ordered = sorted(fields, key=SCRIPT_ONLY.index)
        return [f"{name}: {_annotation(fields[name][0], self.optional)} = {_default(fields[name][1])}\n"
                for name in ordered]

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        plan = self.hosts.get(id(original_node))
        if plan is None:
            return updated_node
        lines = [cst.parse_statement(line) for line in self._field_lines(plan.fields)]
        lines[0] = lines[0].with_changes(leading_lines=[cst.EmptyLine(indent=False),
                                                          cst.EmptyLine(comment=cst.Comment(HOST_COMMENT))])
        body = updated_node.body
        return updated_node.with_changes(body=body.with_changes(body=[*body.body, *lines]))

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        fields: dict[str, tuple[str, str]] = {}
        for plan in self.plans:
            if plan.new_class:
                fields.update(plan.fields)
        if not fields:
            return updated_node
        body = "".join(f"    {line}" for line in self._field_lines(fields))
        cls = cst.parse_statement(f"@dataclass\nclass {HOST_CLASS}:\n{body}")
        cls = cls.with_changes(leading_lines=[cst.EmptyLine(indent=False), cst.EmptyLine(indent=False),
                                              cst.EmptyLine(comment=cst.Comment(HOST_COMMENT))])
        module = ensure_imports(updated_node, [("dataclasses", "dataclass")])
        # above the statement that parses (the import, if new, went in above the first statement using it)
        at = min(p.top for p in self.plans if p.new_class) + len(module.body) - len(updated_node.body)
        body = list(module.body)
        following = body[at]
        blanks = 0
        for line in following.leading_lines:
            if line.comment is not None:
                break
            blanks += 1
        if blanks < 2:
            body[at] = following.with_changes(leading_lines=[*(cst.EmptyLine(indent=False) for _ in range(2 - blanks)),
                                                             *following.leading_lines])
        return module.with_changes(body=[*body[:at], cls, *body[at:]])


def _inserted(node: cst.Tuple | cst.List, at: int, name: str) -> cst.Tuple | cst.List:
    """`node` with the element `name` at position `at`; appended after the last, it takes the last one's comma (a
    trailing comma stays trailing, a multi-line tuple keeps its closing line; a one-element tuple's comma does not
    carry over) and the last gets `, `."""
    elements = list(node.elements)
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    if at < len(elements):
        elements.insert(at, cst.Element(cst.Name(name), comma=comma))
    else:
        last = elements[-1]
        trailing = last.comma
        if isinstance(node, cst.Tuple) and len(elements) == 1 and isinstance(trailing, cst.Comma) and \
                isinstance(trailing.whitespace_after, cst.SimpleWhitespace):
            trailing = cst.MaybeSentinel.DEFAULT  # `(A,)`: the comma made it a tuple, it was no trailing comma
        elements[-1] = last.with_changes(comma=comma)
        elements.append(cst.Element(cst.Name(name), comma=trailing))
    return node.with_changes(elements=elements)


class RlooScriptFields(PythonMigration):
    summary = ("RLOOConfig v1's script-only fields (sft_model_path, reward_model_path, dataset_num_proc) read on a "
               "parsed config -> a dataclass of the script's own, filled from the same flags with the v1 defaults")
    triggers = ("sft_model_path", "reward_model_path", "dataset_num_proc")
    requires = ("trl",)
    order = 90  # before rloo-v1-to-rloo, which marks the reads it leaves

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        text = ctx.module_code(wrapper)
        if "RLOOConfig" not in text:
            return wrapper.module
        admitted = pinned(os.path.dirname(ctx.path), v1_releases()) if ctx.path else None
        finder = _Finder(ctx.options.atlas_trl, admitted or v1_releases(), code_words(text),
                         ctx.options.local_classes, ctx.path)
        wrapper.visit(finder)
        plans = [p for p in finder.plans.values() if p.why_not is None and p.fields]
        if not plans:
            return wrapper.module
        mover = _Mover(self, ctx, plans, finder.optional)
        return wrapper.visit(mover)


MIGRATION = RlooScriptFields()
