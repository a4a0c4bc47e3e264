"""transformers 5.0 removed `use_auth_token=` (deprecated since 4.32): `from_pretrained(token=)`.

Every `from_pretrained` of 4.32 .. 4.57 maps `use_auth_token` to `token` (`token = use_auth_token` after a
warning, read in the wheels); 5.0 reads only `token`. `token=` works on 4.56.2 and every 5.x: the rename is exact.
Applied to `<X>.from_pretrained(...)` of every transformers class (models, tokenizers, configs, processors) and
peft's classes (which forward it), and to the `"use_auth_token"` key of a dict handed only to such calls as `**`
(ChatGLM-Efficient-Tuning's `config_kwargs = {"trust_remote_code": True, "use_auth_token": ...}`, splatted into the
config's, the tokenizer's and the model's `from_pretrained`; `kinds.model_kwargs.model_dicts`).
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import ParentNodeProvider, QualifiedNameProvider, ScopeProvider

from migrations.base import MigrationTransformer, RuleContext
from migrations.kinds.cst import string_value
from migrations.kinds.model_kwargs import model_dicts
from migrations.kinds.options import OptionChange, OptionMigration

_OLD, _NEW = "use_auth_token", "token"


class _Dicts(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider, ScopeProvider, ParentNodeProvider)

    def visit_Module(self, node: cst.Module) -> None:
        self.dicts = model_dicts(self, node, frozenset({_OLD, _NEW}), any_class=True)

    def leave_Dict(self, original_node: cst.Dict, updated_node: cst.Dict) -> cst.BaseExpression:
        keys = [string_value(e.key) for e in updated_node.elements if isinstance(e, cst.DictElement)]
        if id(original_node) not in self.dicts or _OLD not in keys or _NEW in keys:
            return updated_node
        self.note(original_node, "\"use_auth_token\" -> \"token\" in from_pretrained options (transformers 5.0 "
                                 "removed use_auth_token; token works since 4.32)")
        return updated_node.with_changes(elements=[
            e.with_changes(key=e.key.with_changes(value=e.key.value.replace(_OLD, _NEW)))
            if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString) and string_value(e.key) == _OLD
            else e for e in updated_node.elements])

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        keys = {a.keyword.value for a in updated_node.args if a.keyword is not None}
        if id(original_node) not in self.dicts or _OLD not in keys or _NEW in keys:
            return updated_node  # `dict(use_auth_token=...)`
        self.note(original_node, "dict(use_auth_token=) -> token= in from_pretrained options")
        return updated_node.with_changes(args=[a.with_changes(keyword=cst.Name(_NEW))
                                               if a.keyword is not None and a.keyword.value == _OLD else a
                                               for a in updated_node.args])


class UseAuthToken(OptionMigration):
    summary = "from_pretrained(use_auth_token=) -> token= (removed in transformers 5.0)"
    triggers = ("use_auth_token",)
    requires = ("transformers", "peft")
    changes = (
        OptionChange(frozenset(), "use_auth_token", "rename-key", new_key="token",
                     message="transformers 5.0 removed use_auth_token; token= works since 4.32",
                     callee_prefixes=("transformers.", "peft."), callee_suffixes=(".from_pretrained",)),
    )


    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        module = super().transform(wrapper, ctx)
        if _OLD not in module.code:
            return module
        t = _Dicts(self, ctx)
        new = cst.MetadataWrapper(module).visit(t)
        return new if t.changed else module


MIGRATION = UseAuthToken()
