"""sft-batched-formatting-func: a formatting function written for a batch -> `compat.trl.batched_formatting(f)`.

TRL <= 0.15 called `SFTTrainer(formatting_func=f)` on batches of rows when it tokenized an unpacked dataset
(`dataset.map(tokenize, batched=True)`: `f` got a dict of columns) and refused anything but a list of strings back
(0.12.2 - 0.15: "The `formatting_func` should return a list of processed strings since it can lead to silent bugs";
read in the 0.12.2 and 0.13.0 wheels). TRL 0.16 made it per example (`dataset.map(_func, batched=False)`, 0.19.1 and
1.16 wheels): `f` gets one row and must return one string. The era's functions (TRL's own docs:
`for i in range(len(example["question"])): output_texts.append(...)`; return output_texts) then iterate over the
characters of a string and return a list: garbage text or an error, no warning.

A function provably written for the batch form - every `return` of it gives a list (a list display or
comprehension, or a name the function binds only to those) - is passed as `batched_formatting(f)` (`compat.trl`):
`f` is called on a batch of the one example and its single string returned, what TRL 0.15 gave that row (a count
other than one is a `ValueError` naming `f`). Resolved: `formatting_func=NAME` of a call of TRL's `SFTTrainer` (or
`GKDTrainer`, its subclass) where NAME is a function the scope binds once (module level or an enclosing function).
A function returning a string is already per-example: left alone; one building lists of dicts (chat messages) too. A
lambda, a method, `functools.partial`: left alone.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import QualifiedNameProvider, ScopeProvider

from migrations.base import MigrationTransformer, PythonMigration, RuleContext
from migrations.kinds.cst import FunctionBodyVisitor
from migrations.kinds.imports import code_words, ensure_imports, imported_names
from migrations.kinds.options import config_paths

_TRAINERS = config_paths("SFTTrainer", "sft_trainer", "compat.trl.SFTTrainer") | config_paths(
    "GKDTrainer", "gkd_trainer", "trl.experimental.gkd.GKDTrainer", "trl.experimental.gkd.gkd_trainer.GKDTrainer")
_HELPER = "batched_formatting"


class _Returns(FunctionBodyVisitor):
    """The `return` statements of one function and the values its own scope assigns to each name (nested functions,
    lambdas and classes are another scope)."""

    def __init__(self, fn: cst.FunctionDef) -> None:
        super().__init__(fn)
        self.returns: list[cst.Return] = []
        self.assigned: dict[str, list[cst.BaseExpression | None]] = {}  # None: bound some other way
        self.messages = False  # the function builds lists of dicts (chat messages), not of strings

    def visit_Return(self, node: cst.Return) -> None:
        self.returns.append(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self.assigned.setdefault(target.target.value, []).append(node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            self.assigned.setdefault(node.target.value, []).append(None)

    def visit_For(self, node: cst.For) -> None:
        if isinstance(node.target, cst.Name):
            self.assigned.setdefault(node.target.value, []).append(None)

    def visit_Call(self, node: cst.Call) -> None:
        # `output_texts.append({...})`: a list of messages (a chat), not one string per row
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in ("append", "extend") and node.args \
                and isinstance(node.args[0].value, (cst.Dict, cst.DictComp)):
            self.messages = True

    def visit_List(self, node: cst.List) -> None:
        if any(isinstance(e.value, (cst.Dict, cst.DictComp)) for e in node.elements):
            self.messages = True

    def visit_ListComp(self, node: cst.ListComp) -> None:
        if isinstance(node.elt, (cst.Dict, cst.DictComp)):
            self.messages = True


def _listy(value: cst.BaseExpression | None) -> bool:
    return isinstance(value, (cst.List, cst.ListComp))


def returns_a_list(fn: cst.FunctionDef) -> bool:
    """Every `return` of `fn` gives a list (a list display or comprehension, or a name `fn` binds only to those),
    and no list it builds holds dicts (a chat's messages are no batch of strings)."""
    found = _Returns(fn)
    fn.visit(found)
    if not found.returns or found.messages:
        return False
    for ret in found.returns:
        value = ret.value
        if isinstance(value, cst.Name):
            bound = found.assigned.get(value.value, [])
            if not bound or not all(_listy(v) for v in bound):
                return False
        elif not _listy(value):
            return False
    return True


class _Transformer(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider, ScopeProvider)

    def __init__(self, rule: PythonMigration, ctx: RuleContext, helper_free: bool) -> None:
        super().__init__(rule, ctx)
        self.helper_free = helper_free
        self.needed = False

    def _function(self, name: cst.Name) -> cst.FunctionDef | None:
        scope = self.get_metadata(ScopeProvider, name, None)
        found = [a.node for a in scope[name.value] if hasattr(a, "node")] if scope is not None else []
        return found[0] if len(found) == 1 and isinstance(found[0], cst.FunctionDef) else None

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if not imported_names(self, original_node.func) & _TRAINERS:
            return updated_node
        arg = next((a for a in original_node.args if a.keyword is not None and a.keyword.value == "formatting_func"),
                   None)
        if arg is None or not isinstance(arg.value, cst.Name):
            return updated_node
        fn = self._function(arg.value)
        if fn is None or fn.decorators or not returns_a_list(fn):
            return updated_node
        name = arg.value.value
        if not self.helper_free:
            self.todo(original_node, f"{name} returns a list: TRL <= 0.15 called formatting_func on a batch, 0.16+ "
                      f"on one example (one string back): pass compat.trl.batched_formatting({name}) (this module "
                      f"binds the name {_HELPER} itself)")
            return updated_node
        self.needed = True
        self.note(original_node, f"formatting_func={name} -> {_HELPER}({name}): {name} returns a list, written for "
                                 "TRL <= 0.15's batched call; 0.16+ calls it on one example")
        wrapped = cst.Call(func=cst.Name(_HELPER), args=[cst.Arg(cst.Name(name))])
        return updated_node.with_changes(args=[
            a.with_changes(value=wrapped) if a.keyword is not None and a.keyword.value == "formatting_func" else a
            for a in updated_node.args])


class SftBatchedFormattingFunc(PythonMigration):
    summary = "SFTTrainer(formatting_func=f) with f written for a batch (returns a list) -> batched_formatting(f)"
    triggers = ("formatting_func",)
    requires = ("trl",)

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        words = code_words(wrapper.module.code)
        t = _Transformer(self, ctx, helper_free=_HELPER not in words)
        module = wrapper.visit(t)
        if t.needed:
            module = ensure_imports(module, [("compat.trl", _HELPER)])
        return module if t.changed else wrapper.module


MIGRATION = SftBatchedFormattingFunc()
