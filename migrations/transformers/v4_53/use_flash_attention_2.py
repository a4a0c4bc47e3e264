"""transformers 4.53 removed `from_pretrained(use_flash_attention_2=)`: -> `attn_implementation="flash_attention_2"`.

transformers 4.36 - 4.52 (4.52.4 wheel, `modeling_utils.py`) popped `use_flash_attention_2` in `from_pretrained` and
`_from_config` and, when it was true, set `config._attn_implementation = "flash_attention_2"` (a warning said to pass
`attn_implementation="flash_attention_2"` instead); false did nothing. 4.53.3 and every later wheel (4.56.2, the
floor of TRL 1.13+; 5.x) pop it nowhere: it reaches the model's `__init__`, a `TypeError` (run by the rule's tests).
alignment-handbook and the DPO/SFT scripts built on it pass it in their model options
(`model_kwargs = dict(..., use_flash_attention_2=model_args.use_flash_attention_2, ...)`, then
`SFTTrainer(model_init_kwargs=model_kwargs)`).

`use_flash_attention_2=V` becomes `attn_implementation="flash_attention_2" if V else None` (None is the keyword's
default: the release's own choice, as when 4.x got a false flag), `"flash_attention_2"` for a literal true, nothing
for a literal false; `V` is evaluated once, where it was. Rewritten: a keyword of a model's `from_pretrained` /
`from_config` (`kinds.model_kwargs.model_loader`), and an entry of a dict proven to be a model's loading options
(`kinds.model_kwargs.model_dicts`: handed as `**` to such a call or as `model_init_kwargs=`, and used nowhere else).
Marked: the same beside an `attn_implementation` (4.x refused a different one), a loader the rule cannot resolve,
and a dict whose other uses it cannot follow.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import ParentNodeProvider, QualifiedNameProvider, ScopeProvider

from migrations.base import MigrationTransformer, PythonMigration, RuleContext
from migrations.kinds.cst import as_test, literal_value, make_kwarg, replace_args, string_value
from migrations.kinds.model_kwargs import model_dicts, model_loader

OLD, NEW = "use_flash_attention_2", "attn_implementation"
_UNKNOWN = object()
_WHY = "transformers 4.53 removed use_flash_attention_2= (a TypeError on 4.56+ and 5.x)"


def _value(flag: cst.BaseExpression) -> cst.BaseExpression | None:
    """What `attn_implementation=` gets for the flag `flag`; None: nothing (a literal false flag)."""
    literal = literal_value(flag, _UNKNOWN)
    if literal is not _UNKNOWN:
        return cst.SimpleString('"flash_attention_2"') if literal else None
    return cst.IfExp(test=as_test(flag), body=cst.SimpleString('"flash_attention_2"'), orelse=cst.Name("None"))


class _Transformer(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider, ScopeProvider, ParentNodeProvider)

    def __init__(self, rule: PythonMigration, ctx: RuleContext) -> None:
        super().__init__(rule, ctx)
        self.dicts: set[int] = set()

    def visit_Module(self, node: cst.Module) -> None:
        self.dicts = model_dicts(self, node, frozenset({OLD, NEW}))

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        flag = next((a for a in updated_node.args if a.keyword is not None and a.keyword.value == OLD), None)
        if flag is None:
            return updated_node
        own = id(original_node) in self.dicts  # dict(..., use_flash_attention_2=...)
        loader = model_loader(self, original_node.func)
        if not own and loader is not True:
            if loader is None or (isinstance(original_node.func, cst.Name) and original_node.func.value == "dict"):
                self.todo(original_node, f"pass attn_implementation=\"flash_attention_2\" if <flag> else None "
                                         f"instead, if this goes to from_pretrained: {_WHY}")
            return updated_node
        if any(a.keyword is not None and a.keyword.value == NEW for a in updated_node.args):
            self.todo(original_node, f"drop use_flash_attention_2= beside attn_implementation= (4.x refused a "
                                     f"different one): {_WHY}")
            return updated_node
        value = _value(flag.value)
        args = [a for a in updated_node.args if a is not flag] if value is None else \
            [make_kwarg(NEW, value) if a is flag else a for a in updated_node.args]
        self.note(original_node, f"use_flash_attention_2= -> attn_implementation= ({_WHY})")
        return replace_args(updated_node, args)

    def leave_Dict(self, original_node: cst.Dict, updated_node: cst.Dict) -> cst.BaseExpression:
        entry = next((e for e in updated_node.elements
                      if isinstance(e, cst.DictElement) and string_value(e.key) == OLD), None)
        if entry is None:
            return updated_node
        if id(original_node) not in self.dicts or any(
                isinstance(e, cst.DictElement) and string_value(e.key) == NEW for e in updated_node.elements):
            self.todo(original_node, f"if this dict goes to from_pretrained, give it attn_implementation="
                                     f"\"flash_attention_2\" if <flag> else None instead: {_WHY}")
            return updated_node
        value = _value(entry.value)
        quote = entry.key.quote if isinstance(entry.key, cst.SimpleString) else '"'
        elements = [e for e in updated_node.elements if e is not entry] if value is None else [
            e.with_changes(key=cst.SimpleString(f"{quote}{NEW}{quote}"), value=value) if e is entry else e
            for e in updated_node.elements]
        if elements and value is None:
            elements[-1] = elements[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        self.note(original_node, f"\"use_flash_attention_2\" -> \"attn_implementation\" in model options ({_WHY})")
        return updated_node.with_changes(elements=elements)


class UseFlashAttention2(PythonMigration):
    summary = ("from_pretrained(use_flash_attention_2=) (removed in transformers 4.53) -> "
               "attn_implementation=\"flash_attention_2\" if flag else None")
    triggers = (OLD,)

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        t = _Transformer(self, ctx)
        module = wrapper.visit(t)
        return module if t.changed else wrapper.module


MIGRATION = UseFlashAttention2()
