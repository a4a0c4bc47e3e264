"""TRL 1.15 deprecated `use_liger_kernel=True` in SFT/DPO/KTO/GRPO/RLOO -> `model_init_kwargs={"use_kernels": True}`.

1.15 replaced the Liger path with its own fused LM head and warns (`FutureWarning`, removal in v2.0.0): "Use the Hub
kernels instead, with `model_init_kwargs={"use_kernels": True}`" (verified in the 1.15 and 1.16 trainers). The rule
rewrites the five stable configs (matched by qualified name):

* `use_liger_kernel=True` -> `model_init_kwargs={"use_kernels": True}`, merged into an existing `model_init_kwargs`
  (a dict display gets the entry, `dict(...)` gets the keyword, any other expression `e` becomes
  `{**e, "use_kernels": True}`); an existing `use_kernels` entry is left as the user wrote it;
* `use_liger_kernel=False` -> dropped (the default);
* anything else (a variable) -> TODO.

`model_init_kwargs` only applies when the trainer loads the model from a name; the rule reports that as a warning
finding, since a model object passed in must get `use_kernels=True` from its own `from_pretrained` call.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import QualifiedNameProvider

from migrations.base import MigrationTransformer, PythonMigration, RuleContext
from migrations.kinds.cst import kwarg, string_value
from migrations.kinds.imports import imported_names
from migrations.kinds.options import DPO_CONFIGS, GRPO_CONFIGS, KTO_CONFIGS, RLOO_CONFIGS, SFT_CONFIGS

CONFIGS = SFT_CONFIGS | DPO_CONFIGS | KTO_CONFIGS | GRPO_CONFIGS | RLOO_CONFIGS


def _entry(comma: cst.Comma | cst.MaybeSentinel = cst.MaybeSentinel.DEFAULT) -> cst.DictElement:
    """A fresh `"use_kernels": True` entry (a node object may appear at one place of a tree only)."""
    return cst.DictElement(key=cst.SimpleString('"use_kernels"'), value=cst.Name("True"), comma=comma)


class UseLigerKernel(PythonMigration):
    summary = 'use_liger_kernel=True (deprecated in 1.15) -> model_init_kwargs={"use_kernels": True}'
    triggers = ("use_liger_kernel",)
    requires = ("from trl", "import trl")

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        t = _Transformer(self, ctx)
        module = wrapper.visit(t)
        return module if t.changed else wrapper.module


def _has_use_kernels(value: cst.BaseExpression) -> bool:
    if isinstance(value, cst.Dict):
        return any(isinstance(e, cst.DictElement) and string_value(e.key) == "use_kernels" for e in value.elements)
    if isinstance(value, cst.Call):
        return kwarg(value, "use_kernels") is not None
    return False


def _merged(value: cst.BaseExpression) -> cst.BaseExpression:
    """`value` (the existing model_init_kwargs) with `"use_kernels": True` added."""
    if isinstance(value, cst.Dict):
        elements = list(value.elements)
        if not elements:
            return value.with_changes(elements=[_entry()])
        last = elements[-1]
        trailing = last.comma
        if isinstance(trailing, cst.MaybeSentinel):
            elements[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            return value.with_changes(elements=[*elements, _entry()])
        # a trailing comma (often a multi-line dict): copy the layout of the last entry
        elements.append(_entry(trailing))
        elements[-2] = last.with_changes(comma=_comma_like_between(value))
        return value.with_changes(elements=elements)
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "dict":
        args = list(value.args)
        new = cst.Arg(keyword=cst.Name("use_kernels"), value=cst.Name("True"),
                      equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                            whitespace_after=cst.SimpleWhitespace("")))
        if args:
            args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return value.with_changes(args=[*args, new])
    return cst.Dict(elements=[
        cst.StarredDictElement(value=value, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))), _entry()])


def _comma_like_between(value: cst.Dict) -> cst.Comma:
    """The comma used between the entries of a dict (so a multi-line dict stays one entry per line)."""
    for element in value.elements[:-1]:
        if isinstance(element.comma, cst.Comma):
            return element.comma
    # a single entry: put the new one on its own line like the first (the layout after the opening brace)
    return cst.Comma(whitespace_after=value.lbrace.whitespace_after)


class _Transformer(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if not imported_names(self, original_node.func) & CONFIGS:
            return updated_node
        arg = kwarg(updated_node, "use_liger_kernel")
        if arg is None:
            return updated_node
        value = arg.value
        is_true = isinstance(value, cst.Name) and value.value == "True"
        is_false = isinstance(value, cst.Name) and value.value == "False"
        if not (is_true or is_false):
            self.todo(original_node, 'use_liger_kernel is deprecated since TRL 1.15: when it is true, pass '
                                     'model_init_kwargs={"use_kernels": True} instead; then drop use_liger_kernel=')
            return updated_node
        args = list(updated_node.args)
        index = args.index(arg)
        existing = kwarg(updated_node, "model_init_kwargs")
        if is_false:
            self.note(original_node, "use_liger_kernel=False dropped (the default; the option is deprecated)")
            return updated_node.with_changes(args=_remove(args, index))
        if existing is None:
            args[index] = arg.with_changes(keyword=cst.Name("model_init_kwargs"), value=cst.Dict(elements=[_entry()]))
        else:
            if not _has_use_kernels(existing.value):
                args[args.index(existing)] = existing.with_changes(value=_merged(existing.value))
            args = _remove(args, index)
        self.note(original_node, 'use_liger_kernel=True -> model_init_kwargs={"use_kernels": True}')
        self.note(original_node, "model_init_kwargs only applies when the trainer loads the model from a name; a "
                                 "model object needs use_kernels=True in its own from_pretrained call",
                  severity="warning", changed=False)
        return updated_node.with_changes(args=args)


def _remove(args: list[cst.Arg], index: int) -> list[cst.Arg]:
    """`args` without `args[index]`, keeping the call's trailing-comma style."""
    removed = args[index]
    out = args[:index] + args[index + 1:]
    if out and index == len(args) - 1:
        out[-1] = out[-1].with_changes(comma=removed.comma)
    return out


MIGRATION = UseLigerKernel()
