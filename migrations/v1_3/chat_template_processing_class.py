"""chat-template-processing-class: `apply_chat_template(example, tokenizer=...)` -> `processing_class=` (TRL 1.3).

TRL's `apply_chat_template` and `maybe_apply_chat_template` (`trl`, `trl.data_utils`) took `(example, tokenizer,
tools=None, **template_kwargs)` from 0.11 to 1.2 and take `(example, processing_class, tools=None,
**template_kwargs)` from 1.3 on (atlas; no alias): the same parameter in the same place, renamed. A `tokenizer=`
keyword now lands in `**template_kwargs` and `processing_class` is missing (`TypeError`). Their most common use
passes it through `datasets`' `map`: `dataset.map(apply_chat_template, fn_kwargs={"tokenizer": tokenizer})`
(gustavecortal/eliciting_emotional_reasoning, alignment-handbook-style scripts).

Rewritten, the functions resolved by qualified name (a module's own `apply_chat_template` is left alone): the keyword
of a direct call, and the `"tokenizer"` key of a `fn_kwargs=` dict literal (or `dict(tokenizer=...)`) of a `.map(...)`
call whose function (first argument or `function=`) is one of them. Marked: both names given.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import QualifiedNameProvider

from migrations.base import MigrationTransformer, PythonMigration
from migrations.kinds.imports import imported_names

FUNCTIONS = frozenset({f"{m}.{n}" for m in ("trl", "trl.data_utils")
                       for n in ("apply_chat_template", "maybe_apply_chat_template")})
_NOTE = "tokenizer -> processing_class (TRL 1.3 renamed the parameter of apply_chat_template)"


class _Transformer(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def _chat_template(self, node: cst.BaseExpression) -> bool:
        return bool(imported_names(self, node) & FUNCTIONS)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if self._chat_template(original_node.func):
            return self._rename_keyword(original_node, updated_node)
        func = original_node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "map"):
            return updated_node
        target = next((a.value for a in original_node.args if a.keyword is None), None) or next(
            (a.value for a in original_node.args if a.keyword is not None and a.keyword.value == "function"), None)
        if target is None or not self._chat_template(target):
            return updated_node
        args = []
        for arg in updated_node.args:
            if arg.keyword is not None and arg.keyword.value == "fn_kwargs":
                arg = arg.with_changes(value=self._rename_in(original_node, arg.value))
            args.append(arg)
        return updated_node.with_changes(args=args)

    def _rename_keyword(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        keywords = {a.keyword.value for a in updated.args if a.keyword is not None}
        if "tokenizer" not in keywords:
            return updated
        if "processing_class" in keywords:
            self.todo(original, "both tokenizer= and processing_class= given: keep processing_class= (TRL 1.3 "
                                "renamed the parameter)")
            return updated
        self.note(original, _NOTE)
        return updated.with_changes(args=[a.with_changes(keyword=cst.Name("processing_class"))
                                          if a.keyword is not None and a.keyword.value == "tokenizer" else a
                                          for a in updated.args])

    def _rename_in(self, original: cst.Call, value: cst.BaseExpression) -> cst.BaseExpression:
        if isinstance(value, cst.Dict):
            keys = [e.key for e in value.elements if isinstance(e, cst.DictElement)]
            texts = [k.evaluated_value for k in keys if isinstance(k, cst.SimpleString)]
            if "tokenizer" not in texts:
                return value
            if "processing_class" in texts:
                self.todo(original, "fn_kwargs has both tokenizer and processing_class: keep processing_class")
                return value
            self.note(original, _NOTE)
            return value.with_changes(elements=[
                e.with_changes(key=e.key.with_changes(value=e.key.value.replace("tokenizer", "processing_class")))
                if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)
                and e.key.evaluated_value == "tokenizer" else e for e in value.elements])
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "dict":
            return self._rename_keyword(original, value)
        return value


class ChatTemplateProcessingClass(PythonMigration):
    summary = "trl.apply_chat_template / maybe_apply_chat_template: tokenizer -> processing_class (renamed in 1.3)"
    triggers = ("apply_chat_template",)
    requires = ("trl",)
    transformer = _Transformer


MIGRATION = ChatTemplateProcessingClass()
