"""Which dicts of a module are `from_pretrained` keyword arguments, and which `from_pretrained` calls are a model's.

The PPO era built a model's loading options as a dict and handed it on (alignment-handbook's `model_kwargs =
dict(revision=..., use_flash_attention_2=..., torch_dtype=...)`, then `SFTTrainer(model_init_kwargs=model_kwargs)` or
`AutoModelForCausalLM.from_pretrained(name, **model_kwargs)`). A rule that renames such a keyword may rewrite the dict
only where every use of it is such a hand-over:

* `model_dicts(rule, module)`: the dict displays (`{...}`) and `dict(...)` calls proven to be loading options: passed
  as `**` to a model's `from_pretrained` / `from_config` (`model_loader`), or as `model_init_kwargs=` /
  `ref_model_init_kwargs=` (TRL's trainers and configs load the model with them), or as `pipeline(model_kwargs=)`
  (the pipeline loads its model with them), directly or through a name the
  scope binds once, to that dict, and uses nowhere else (`x["key"] = ...` writes of other keys are fine);
* `model_loader(rule, func)`: True for `<X>.from_pretrained` / `<X>.from_config` where X is a transformers model class
  (not a config, tokenizer or processor), peft's `AutoPeftModel*`, TRL's value-head wrappers or `compat.value_head`'s,
  or a name bound once to one of them; None where X does not resolve.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import ParentNodeProvider, ScopeProvider

from migrations.kinds.bindings import plain_value
from migrations.kinds.cst import string_value
from migrations.kinds.imports import imported_names

LOADERS = ("from_pretrained", "from_config")
INIT_KWARGS = ("model_init_kwargs", "ref_model_init_kwargs")
#: transformers' pipeline factory: it loads its model with `from_pretrained(..., **model_kwargs)`
PIPELINES = frozenset({"transformers.pipeline", "transformers.pipelines.pipeline"})
_PREFIXES = ("transformers.", "peft.AutoPeftModel", "peft.auto.AutoPeftModel", "compat.value_head.")
_VALUE_HEADS = ("AutoModelForCausalLMWithValueHead", "AutoModelForSeq2SeqLMWithValueHead")
_NOT_MODELS = ("Config", "Tokenizer", "Processor", "FeatureExtractor")


def model_loader(visitor: cst.CSTVisitor, func: cst.BaseExpression) -> bool | None:
    """See the module docstring; `visitor` declares `QualifiedNameProvider`."""
    if not isinstance(func, cst.Attribute) or func.attr.value not in LOADERS:
        return False
    names = imported_names(visitor, func.value)
    if not names and isinstance(func.value, cst.Name):
        # `selected_model = AutoModelForCausalLM` ... `selected_model.from_pretrained(...)` (malaya's sessions): a
        # name its scope binds once, to a class reference
        bound = plain_value(visitor, func.value)
        if isinstance(bound, cst.IfExp):  # `modtype = AutoModelForSequenceClassification if rm else AutoModelFor...`
            branches = [model_loader(visitor, func.with_changes(value=b)) for b in (bound.body, bound.orelse)]
            return True if branches == [True, True] else False if branches == [False, False] else None
        if isinstance(bound, (cst.Name, cst.Attribute)):
            names = imported_names(visitor, bound)
    if not names:
        return None
    for q in names:
        last = q.rsplit(".", 1)[-1]
        if any(x in last for x in _NOT_MODELS):
            continue
        if q.startswith(_PREFIXES) or (q.startswith("trl.") and last in _VALUE_HEADS):
            return True
    return False


def _is_dict(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Dict) or (isinstance(node, cst.Call) and isinstance(node.func, cst.Name)
                                          and node.func.value == "dict" and all(a.star == "" for a in node.args))


def _any_loader(visitor: cst.CSTVisitor, func: cst.BaseExpression) -> bool:
    """`<X>.from_pretrained` / `<X>.from_config` of any transformers or peft class (configs and tokenizers too)."""
    if model_loader(visitor, func) is True:
        return True
    return isinstance(func, cst.Attribute) and func.attr.value in LOADERS and any(
        n.startswith(("transformers.", "peft.")) for n in imported_names(visitor, func.value))


def _hand_over(visitor: cst.CSTVisitor, node: cst.CSTNode, any_class: bool = False) -> bool:
    """`node` (a dict, or a name bound to one) is handed to a model loader: `**node` of a model's from_pretrained /
    from_config (with `any_class`, of any transformers / peft class's), or the value of `model_init_kwargs=` /
    `ref_model_init_kwargs=`, or of `pipeline(model_kwargs=)`."""
    parent = visitor.get_metadata(ParentNodeProvider, node, None)
    if not isinstance(parent, cst.Arg):
        return False
    call = visitor.get_metadata(ParentNodeProvider, parent, None)
    if not isinstance(call, cst.Call):
        return False
    if parent.star == "**":
        return _any_loader(visitor, call.func) if any_class else model_loader(visitor, call.func) is True
    if parent.keyword is not None and parent.keyword.value == "model_kwargs":  # `pipeline(model_kwargs=...)`
        return bool(imported_names(visitor, call.func) & PIPELINES)
    return parent.keyword is not None and parent.keyword.value in INIT_KWARGS


def _other_key_write(visitor: cst.CSTVisitor, name: cst.Name, keys: frozenset[str]) -> bool:
    """`name["other"] = value`: a write of a key none of `keys` (the rule's own keys written this way would escape)."""
    sub = visitor.get_metadata(ParentNodeProvider, name, None)
    if not isinstance(sub, cst.Subscript) or len(sub.slice) != 1 or not isinstance(sub.slice[0].slice, cst.Index):
        return False
    key = string_value(sub.slice[0].slice.value)
    target = visitor.get_metadata(ParentNodeProvider, sub, None)
    return key is not None and key not in keys and isinstance(target, cst.AssignTarget)


def model_dicts(visitor: cst.CSTVisitor, module: cst.Module, keys: frozenset[str],
                any_class: bool = False) -> set[int]:
    """The ids of the dict nodes of `module` proven to be model loading options (module docstring). `visitor` is the
    rule's transformer after it visited `module` (its metadata resolved: `ParentNodeProvider`, `ScopeProvider`,
    `QualifiedNameProvider`); `keys`: the keys the rule rewrites; `any_class`: options every transformers / peft
    `from_pretrained` takes (`token`), so a dict handed to a config's or a tokenizer's counts too."""
    found: set[int] = set()

    class _Dicts(cst.CSTVisitor):
        def visit_Dict(self, node: cst.Dict) -> None:
            self._consider(node)

        def visit_Call(self, node: cst.Call) -> None:
            if _is_dict(node):
                self._consider(node)

        def _consider(self, node: cst.BaseExpression) -> None:
            if _hand_over(visitor, node, any_class):
                found.add(id(node))
                return
            assign = visitor.get_metadata(ParentNodeProvider, node, None)
            if not isinstance(assign, cst.Assign) or len(assign.targets) != 1 \
                    or not isinstance(assign.targets[0].target, cst.Name):
                return
            target = assign.targets[0].target
            scope = visitor.get_metadata(ScopeProvider, target, None)
            if scope is None:
                return
            bindings = [a for a in scope.assignments[target.value]]
            if len(bindings) != 1:
                return
            uses = [access.node for access in scope.accesses[target.value]]
            if uses and all(isinstance(u, cst.Name) and (_hand_over(visitor, u, any_class)
                                                         or _other_key_write(visitor, u, keys))
                            for u in uses) and any(_hand_over(visitor, u, any_class) for u in uses):
                found.add(id(node))

    module.visit(_Dicts())
    return found
