"""transformers 5 dropped the text-classification pipeline's `return_all_scores=`: wrap the pipeline so it answers it.

transformers 4.x (4.56.2 wheel, `TextClassificationPipeline._sanitize_parameters`) read `return_all_scores=True`,
given when the pipeline was built or called, as "every label's score, in label-id order", nested in one more list for
a single string, and `False` as the top label only. The PPO-era reward code is written on it: TRL's own sentiment
examples (0.4 - 0.19) pass `sent_kwargs = {"return_all_scores": True, "function_to_apply": "none", ...}` and read
`output[1]["score"]`, the positive label's logit. transformers 5 removed the keyword without an error: it reaches the
tokenizer, which ignores it, and the call answers the top label alone, a dict (`output[1]` is `KeyError: 1`; code
reading `output[0]` or iterating the row gets other numbers). Run on 5.24.0 by the rule's tests. `top_k=None`, the
replacement the 4.x warning named, sorts the labels by score: not the same list.

So in a module that uses `return_all_scores` (a keyword of a call, a `"return_all_scores"` key of a dict or
`dict(...)` of keywords handed to a call) and builds a text-classification pipeline (`transformers.pipeline` with a
task that may be text classification, or `TextClassificationPipeline(...)`), each such construction becomes
`with_return_all_scores(pipeline(...))` (`compat.trl`): the same pipeline object, answering `return_all_scores=` as
4.x did on every transformers (a `return_all_scores=` given at construction moves to the wrapper, its default); a call
without it, or with `top_k`, is answered as before. A module that uses the keyword but builds no pipeline (the
pipeline comes from elsewhere) gets a marker at each use: wrap the pipeline where it is built. A keyword of a call to
a function this module defines itself (`def score(texts, return_all_scores=False)`) is the project's own.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import QualifiedNameProvider, ScopeProvider

from migrations.base import MigrationTransformer, PythonMigration, RuleContext
from migrations.kinds.cst import string_value
from migrations.kinds.imports import code_words, ensure_imports, imported_names

_FIELD = "return_all_scores"
_HELPER = "with_return_all_scores"
_FACTORIES = frozenset({"transformers.pipeline", "transformers.pipelines.pipeline"})
_CLASSES = frozenset({"transformers.TextClassificationPipeline", "transformers.pipelines.TextClassificationPipeline",
                      "transformers.pipelines.text_classification.TextClassificationPipeline"})
#: the task names transformers maps to TextClassificationPipeline (4.56.2 and 5.24.0 `SUPPORTED_TASKS` / aliases)
_TASKS = frozenset({"text-classification", "sentiment-analysis"})
_GONE = ("transformers 5 ignores return_all_scores (the tokenizer gets it; the call answers the top label only, "
         "4.x gave every label's score in label order)")


class _Transformer(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider, ScopeProvider)

    def __init__(self, rule: PythonMigration, ctx: RuleContext) -> None:
        super().__init__(rule, ctx)
        self.mode = "scan"  # first pass: collect; second pass: "wrap" the pipelines built here, or "mark" the uses
        self.uses: list[cst.CSTNode] = []  # (scan) the keywords / dict keys / subscripts naming the field
        self.builds = 0  # text-classification pipelines this module builds
        self.wrapped_inner: set[int] = set()  # calls already inside with_return_all_scores(...)
        self.needed = False
        self.helper_free = True

    # ---- what is what ----
    def _builds_pipeline(self, call: cst.Call) -> bool:
        names = imported_names(self, call.func)
        if names & _CLASSES:
            return True
        if not names & _FACTORIES:
            return False
        task = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "task"), None)
        if task is None and call.args and call.args[0].keyword is None and call.args[0].star == "":
            task = call.args[0].value
        value = string_value(task) if task is not None else None
        return value is None or value in _TASKS  # no task: the model's own; a variable: maybe text classification

    def _own_function(self, func: cst.BaseExpression) -> bool:
        """`func` names a function this module defines (its keyword is the project's own parameter)."""
        if not isinstance(func, cst.Name):
            return False
        scope = self.get_metadata(ScopeProvider, func, None)
        if scope is None:
            return False
        return any(isinstance(getattr(a, "node", None), (cst.FunctionDef, cst.ClassDef)) for a in scope[func.value])

    def visit_Call(self, node: cst.Call) -> None:
        if imported_names(self, node.func) & {f"compat.trl.{_HELPER}"} and node.args:
            self.wrapped_inner.add(id(node.args[0].value))
        if self.mode == "scan" and self._builds_pipeline(node):  # wrapped or not: the module builds it
            self.builds += 1
        if self._own_function(node.func):
            return
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == _FIELD:
                self._use(arg)

    def visit_DictElement(self, node: cst.DictElement) -> None:
        if string_value(node.key) == _FIELD:
            self._use(node)

    def visit_SubscriptElement(self, node: cst.SubscriptElement) -> None:
        """`kwargs["return_all_scores"] = True`"""
        if isinstance(node.slice, cst.Index) and string_value(node.slice.value) == _FIELD:
            self._use(node)

    def _use(self, node: cst.CSTNode) -> None:
        if self.mode == "scan":
            self.uses.append(node)
        elif self.mode == "mark":
            self.todo(node, f"wrap this pipeline where it is built: compat.trl.{_HELPER}(pipeline(...)); {_GONE}")

    # ---- the rewrite ----
    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if self.mode != "wrap" or id(original_node) in self.wrapped_inner or not self._builds_pipeline(original_node):
            return updated_node
        if not self.helper_free:
            self.todo(original_node, f"build this pipeline as compat.trl.{_HELPER}(...) (this module binds the name "
                                     f"{_HELPER} itself): {_GONE}")
            return updated_node
        default = next((a for a in updated_node.args if a.keyword is not None and a.keyword.value == _FIELD), None)
        inner = updated_node
        extra: list[cst.Arg] = []
        if default is not None:
            args = [a for a in updated_node.args if a is not default]
            if args:
                args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            inner = updated_node.with_changes(args=args)
            extra = [cst.Arg(default.value, keyword=cst.Name(_FIELD),
                             equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))]
        self.needed = True
        self.note(original_node, f"pipeline(...) -> {_HELPER}(pipeline(...)): {_GONE}; the wrapper answers it as 4.x did")
        return cst.Call(func=cst.Name(_HELPER), args=[cst.Arg(inner), *extra])


class PipelineReturnAllScores(PythonMigration):
    summary = ("text-classification pipeline used with return_all_scores= (ignored by transformers 5) -> "
               "compat.trl.with_return_all_scores(pipeline(...))")
    triggers = (_FIELD,)

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        t = _Transformer(self, ctx)
        wrapper.visit(t)
        if not t.uses:
            return wrapper.module
        t.mode = "wrap" if t.builds else "mark"
        t.helper_free = _HELPER not in code_words(wrapper.module.code)
        module = wrapper.visit(t)
        if t.needed:
            module = ensure_imports(module, [("compat.trl", _HELPER)])
        return module if t.changed else wrapper.module


MIGRATION = PipelineReturnAllScores()
