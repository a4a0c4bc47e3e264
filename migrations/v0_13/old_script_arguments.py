"""old-script-arguments: TRL 0.8's `SftScriptArguments` / `DpoScriptArguments` -> `compat.trl`, their training
fields read from the config.

TRL 0.8's `examples/scripts/sft.py` / `dpo.py` (and their many copies) parse
`TrlParser((SftScriptArguments, TrainingArguments, ModelConfig))` and hand `args.packing`, `args.beta`, ... to the
trainer. `trl.commands.cli_utils` lost both classes in 0.9.2 and went in 0.13 (read from the wheels). Their training
fields are config fields now (SFT: `dataset_text_field`, `packing`; DPO: `beta`, `max_length`, on `SFTConfig` /
`DPOConfig` 1.13 - 1.16), and the TrainingArguments of that parser has to become the trainer's config on TRL 1.x, so
a copy of the old class would make the parser fail on the duplicated options. For the script shape above, resolved by
qualified name, the rule:

* moves the import to `compat.trl`, whose copies leave those fields (and `config`, which TRL 1.x's `TrlParser`
  reserves) out (`compat/_script_args.py`);
* makes the parser's `TrainingArguments` the trainer's config (`SFTConfig` / `DPOConfig`; a marker says that its
  defaults differ, as `trainer-kwargs-to-config` does) and points every read of a moved field at it
  (`args.packing` -> `training_args.packing`): the same option, parsed into the object that now owns it;
* marks the options the script never read (TRL 0.8 parsed and ignored them; now they set the config) and the
  defaults that changed under the same option: `--dataset_text_field` ("text" on SFTConfig; None in TRL
  0.8.4 - 0.8.6), `--max_length` (DPOConfig 1024, was 512), DPO `sanity_check` (True in 0.8.0 - 0.8.1).

It runs before `removed-cli-utils` and `trainer-kwargs-to-config` (which then moves `packing=training_args.packing` off
the trainer). Anything else - the parse result used whole (`print(args)`, `asdict(args)`), a moved field written, a
parser built or parsed more than once, no config class in the tuple - is left to `removed-cli-utils`, which marks it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import ParentNodeProvider, QualifiedNameProvider, ScopeProvider

from migrations.base import MigrationTransformer, PythonMigration, RuleContext
from migrations.kinds.cst import dotted
from migrations.kinds.imports import (
    drop_unused_import,
    ensure_imports,
    imported_names,
    split_import_from,
)
from migrations.kinds.options import (
    ARGUMENT_PARSERS,
    DPO_CONFIGS,
    PARSE_METHODS,
    SFT_CONFIGS,
)
from migrations.v0_13.trainer_kwargs_to_config import parsed_defaults_message

_MOD = "trl.commands.cli_utils"
_TRAINING_ARGS = {"transformers.TrainingArguments", "transformers.training_args.TrainingArguments"}


@dataclass(frozen=True)
class _Kind:
    config: str
    config_paths: frozenset[str]
    moved: tuple[str, ...]
    defaults: tuple[str, ...]  # markers: the defaults that changed under the same options


_KINDS = {
    "SftScriptArguments": _Kind("SFTConfig", SFT_CONFIGS, ("dataset_text_field", "packing"), (
        '--dataset_text_field now sets SFTConfig.dataset_text_field, default "text" (None in TRL 0.8.4-0.8.6)',)),
    "DpoScriptArguments": _Kind("DPOConfig", DPO_CONFIGS, ("beta", "max_length"), (
        "--max_length now sets DPOConfig.max_length, default 1024 (was 512)",
        "sanity_check defaults to False (True in TRL 0.8.0-0.8.1): pass --sanity_check if you relied on it")),
}


@dataclass
class _Plan:
    kind: str
    element: cst.Element  # the script-arguments class in the parser tuple
    config_element: cst.Element
    switch: bool  # the config element is a transformers.TrainingArguments
    config_name: str  # the name the config is unpacked into
    reads: list[cst.Attribute] = field(default_factory=list)  # `args.<moved field>` to point at the config


class _Planner(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (QualifiedNameProvider, ScopeProvider, ParentNodeProvider)

    def __init__(self) -> None:
        super().__init__()
        self.plans: list[_Plan] = []
        self.refused: set[str] = set()  # kinds with a use this rule does not understand

    def _qnames(self, node: cst.CSTNode) -> set[str]:
        return imported_names(self, node)

    def _kind(self, node: cst.CSTNode) -> str | None:
        return next((n for n in _KINDS if f"{_MOD}.{n}" in self._qnames(node)), None)

    def visit_Name(self, node: cst.Name) -> None:
        # every use of the class must be an element of a parser tuple this rule plans for
        kind = self._kind(node)
        parent = self._parent(node)
        if kind is None or isinstance(parent, (cst.ImportAlias, cst.AsName)):
            return
        if not isinstance(parent, cst.Element) or not self._plan(kind, parent):
            self.refused.add(kind)

    def _parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.get_metadata(ParentNodeProvider, node, None)

    def _single_assign(self, name: cst.Name) -> cst.Assign | None:
        scope = self.get_metadata(ScopeProvider, name, None)
        assignments = [a for a in scope[name.value] if hasattr(a, "node")] if scope is not None else []
        if len(assignments) != 1:
            return None
        node: cst.CSTNode | None = assignments[0].node
        while node is not None and not isinstance(node, (cst.Assign, cst.BaseStatement)):
            node = self._parent(node)
        return node if isinstance(node, cst.Assign) and len(node.targets) == 1 else None

    def _plan(self, kind: str, element: cst.Element) -> bool:
        tuple_node = self._parent(element)
        arg = self._parent(tuple_node) if isinstance(tuple_node, (cst.Tuple, cst.List)) else None
        parser_call = self._parent(arg) if isinstance(arg, cst.Arg) else None
        if not (isinstance(parser_call, cst.Call) and self._qnames(parser_call.func) & ARGUMENT_PARSERS
                and parser_call.args and parser_call.args[0] is arg):
            return False
        spec = _KINDS[kind]
        configs = [e for e in tuple_node.elements if self._qnames(e.value) & (_TRAINING_ARGS | spec.config_paths)]
        assign = self._parent(parser_call)
        if len(configs) != 1 or not (isinstance(assign, cst.Assign) and len(assign.targets) == 1
                                     and isinstance(assign.targets[0].target, cst.Name)):
            return False
        parser = assign.targets[0].target
        scope = self.get_metadata(ScopeProvider, parser, None)
        accesses = [a.node for a in scope.accesses[parser.value]] if scope is not None else []
        if len(accesses) != 1 or self._single_assign(parser) is not assign:
            return False
        method = self._parent(accesses[0])
        call = self._parent(method) if isinstance(method, cst.Attribute) else None
        unpack = self._parent(call) if isinstance(call, cst.Call) else None
        if not (isinstance(method, cst.Attribute) and method.attr.value in PARSE_METHODS
                and isinstance(unpack, cst.Assign) and len(unpack.targets) == 1
                and isinstance(unpack.targets[0].target, cst.Tuple)):
            return False
        names = [e.value for e in unpack.targets[0].target.elements]
        if len(names) != len(tuple_node.elements) or not all(isinstance(n, cst.Name) for n in names):
            return False
        args_name = names[list(tuple_node.elements).index(element)]
        config_name = names[list(tuple_node.elements).index(configs[0])]
        if self._single_assign(args_name) is not unpack or self._single_assign(config_name) is not unpack:
            return False
        reads = self._moved_reads(args_name, spec)
        if reads is None:
            return False
        self.plans.append(_Plan(kind, element, configs[0], bool(self._qnames(configs[0].value) & _TRAINING_ARGS),
                                config_name.value, reads))
        return True

    def _moved_reads(self, name: cst.Name, spec: _Kind) -> list[cst.Attribute] | None:
        """The `name.<moved field>` reads; None when `name` is used whole or a moved field is written or deleted."""
        scope = self.get_metadata(ScopeProvider, name, None)
        reads = []
        for access in scope.accesses[name.value] if scope is not None else ():
            attr = self._parent(access.node)
            if not (isinstance(attr, cst.Attribute) and attr.value is access.node):
                return None
            if attr.attr.value not in spec.moved:
                continue
            if isinstance(self._parent(attr), (cst.AssignTarget, cst.AugAssign, cst.Del, cst.AnnAssign)):
                return None
            reads.append(attr)
        return reads


class _Transformer(MigrationTransformer):
    def __init__(self, rule: PythonMigration, ctx: RuleContext, plans: list[_Plan], kinds: set[str]) -> None:
        super().__init__(rule, ctx)
        self.kinds = kinds
        self.elements = {id(p.element): p for p in plans}
        self.configs = {id(p.config_element): p for p in plans}
        self.reads = {id(r): p for p in plans for r in p.reads}

    def leave_Element(self, original_node: cst.Element, updated_node: cst.Element) -> cst.Element:
        plan = self.elements.get(id(original_node))
        if plan is not None:
            spec = _KINDS[plan.kind]
            self.note(original_node, f"{plan.kind} -> compat.trl (the TRL 0.8 class without "
                                     f"{', '.join(spec.moved)}, which {spec.config} parses now)")
            for message in spec.defaults:
                self.todo(original_node, message)
            unread = [f for f in spec.moved if f not in {r.attr.value for r in plan.reads}]
            if unread:
                self.todo(original_node, f"{', '.join('--' + f for f in unread)} now set {spec.config} fields: this "
                                         "script never read them from the script arguments, so TRL 0.8 ignored them")
        plan = self.configs.get(id(original_node))
        if plan is not None and plan.switch:
            config = _KINDS[plan.kind].config
            self.todo(original_node, parsed_defaults_message(config))
            return updated_node.with_changes(value=cst.Name(config))
        return updated_node

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        plan = self.reads.get(id(original_node))
        if plan is None:
            return updated_node
        self.note(original_node, f"{dotted(original_node)} -> {plan.config_name}.{original_node.attr.value}")
        return updated_node.with_changes(value=cst.Name(plan.config_name))

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine,  # type: ignore[override]
                                  updated_node: cst.SimpleStatementLine):
        body = updated_node.body
        if len(body) != 1 or not isinstance(body[0], cst.ImportFrom):
            return updated_node
        out = split_import_from(body[0], lambda mod, name: ("compat.trl", name)
                                if mod == _MOD and name in self.kinds else None)
        if out is None:
            return updated_node
        self.note(original_node, f"{', '.join(sorted(self.kinds))} -> compat.trl")
        lines = [updated_node.with_changes(body=[stmt]) if i == 0 else cst.SimpleStatementLine(body=[stmt])
                 for i, stmt in enumerate(out)]
        return cst.FlattenSentinel(lines) if len(lines) > 1 else lines[0]


class OldScriptArguments(PythonMigration):
    summary = ("TRL 0.8 SftScriptArguments / DpoScriptArguments -> compat.trl; their packing/beta/... read from "
               "SFTConfig / DPOConfig in the same TrlParser")
    triggers = ("SftScriptArguments", "DpoScriptArguments")
    requires = ("cli_utils",)
    order = 90  # before removed-cli-utils (which marks what this rule leaves) and trainer-kwargs-to-config

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        planner = _Planner()
        wrapper.visit(planner)
        plans = [p for p in planner.plans if p.kind not in planner.refused]
        kinds = {p.kind for p in plans}
        if not plans:
            return wrapper.module
        module = wrapper.visit(_Transformer(self, ctx, plans, kinds))
        needed = [("trl", _KINDS[p.kind].config) for p in plans if p.switch]
        if needed:
            module = ensure_imports(module, needed)
            for mod in ("transformers", "transformers.training_args"):
                module = drop_unused_import(module, mod, "TrainingArguments")
        return module


MIGRATION = OldScriptArguments()
