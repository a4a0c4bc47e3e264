"""`compute_loss` overrides of `transformers.Trainer` subclasses that take no `num_items_in_batch`.

From 4.46 on (4.56.2 and 5.x alike: `training_step` in the wheels) the Trainer calls `self.compute_loss(model, inputs,
num_items_in_batch=num_items_in_batch)`. A PPO-era override, `def compute_loss(self, model, inputs,
return_outputs=False)` (TRL's StackLLaMA reward trainer and its many copies, the reward / pairwise trainers of
ChatGLM-Efficient-Tuning ports), is a `TypeError` at the first step.

Adding the parameter alone would change training: 4.56+ divides a micro-batch's loss by the gradient accumulation
steps only when the model takes no loss keywords or no item count was made (`model_accepts_loss_kwargs`, counted for
batches with `labels`), while 4.45 always divided it (`Accelerator.backward`). An override that ignores the count must
set `model_accepts_loss_kwargs` to False (transformers' own docstring of `compute_loss` says so); the Trainer then
counts nothing, passes `num_items_in_batch=None` and divides as 4.45 did. So, in a class deriving from
`transformers.Trainer` / `Seq2SeqTrainer` (directly or through the project's own subclasses, in the file or a module
it imports; TRL's trainers have their own rule, `trainer-subclass-internals`), a `compute_loss` without
`num_items_in_batch` and without `**kwargs`:

* gets `num_items_in_batch=None` as its last parameter (keyword-only after a `*args`);
* and its class gets `model_accepts_loss_kwargs = loss_kwargs_ignored` (`compat.trl`: a property that reads False
  and ignores the Trainer's assignment), unless the class already sets `model_accepts_loss_kwargs` itself.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import QualifiedNameProvider, ScopeProvider

from migrations.base import MigrationTransformer, PythonMigration, RuleContext
from migrations.kinds import grammar
from migrations.kinds.cst import append_items
from migrations.kinds.imports import ensure_imports
from migrations.kinds.trainer_subclasses import (
    TRAINERS,
    SelfAttributeAssigned,
    imported_subclasses,
    subclasses_in,
    trainer_base,
)

_ATTR = "model_accepts_loss_kwargs"
_HELPER = "loss_kwargs_ignored"
_COMMENT = "# trl-compat: compute_loss ignores num_items_in_batch (transformers 4.46+): 4.45's loss scaling"


def _takes_num_items(fn: cst.FunctionDef) -> bool:
    p = fn.params
    return isinstance(p.star_kwarg, cst.Param) or any(
        x.name.value == "num_items_in_batch" for x in (*p.posonly_params, *p.params, *p.kwonly_params))


def _sets_attribute(body: cst.BaseSuite) -> bool:
    """The class body assigns `model_accepts_loss_kwargs` itself (a class attribute or `self.` in a method)."""
    own = SelfAttributeAssigned(_ATTR)
    body.visit(own)
    if own.found:
        return True
    for stmt in getattr(body, "body", ()):
        if isinstance(stmt, cst.SimpleStatementLine):
            for s in stmt.body:
                targets = [t.target for t in s.targets] if isinstance(s, cst.Assign) else \
                    [s.target] if isinstance(s, cst.AnnAssign) else []
                if any(isinstance(t, cst.Name) and t.value == _ATTR for t in targets):
                    return True
    return False


class _Transformer(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider, ScopeProvider)

    def __init__(self, rule: PythonMigration, ctx: RuleContext) -> None:
        super().__init__(rule, ctx)
        self._local: dict[str, str] = {}
        self._classes: list[bool] = []  # per enclosing class: a Trainer subclass (not TRL's)
        self._fixed: set[int] = set()  # classes whose compute_loss got the parameter
        self.needed = False

    def visit_Module(self, node: cst.Module) -> None:
        try:
            tree = grammar.parse(node.code)
        except (SyntaxError, ValueError):
            return
        imported = imported_subclasses(tree, self.ctx.path, TRAINERS, None)
        self._local = {**imported, **subclasses_in(tree, TRAINERS, None, imported)}

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(len(node.bases) == 1 and trainer_base(self, node.bases[0].value, self._local, trl=False))

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        if original_node.name.value != "compute_loss" or not self._classes or not self._classes[-1] \
                or _takes_num_items(original_node) or not self._is_method(original_node):
            return updated_node
        param = cst.Param(cst.Name("num_items_in_batch"), default=cst.Name("None"),
                          equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                                whitespace_after=cst.SimpleWhitespace("")))
        new = _append_param(updated_node.params, param)
        self.note(original_node, "compute_loss(..., num_items_in_batch=None): transformers 4.46+ passes it (a "
                                 "TypeError without it); the class keeps 4.45's loss scaling (loss_kwargs_ignored)")
        self._fixed.add(len(self._classes))
        return updated_node.with_changes(params=new)

    def _is_method(self, fn: cst.FunctionDef) -> bool:
        scope = self.get_metadata(ScopeProvider, fn, None)
        return scope is not None and type(scope).__name__ == "ClassScope"

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        depth = len(self._classes)
        self._classes.pop()
        if depth not in self._fixed:
            return updated_node
        self._fixed.discard(depth)
        if _sets_attribute(original_node.body) or not isinstance(updated_node.body, cst.IndentedBlock):
            return updated_node
        body = list(updated_node.body.body)
        at = 1 if body and _docstring(body[0]) else 0
        line = cst.parse_statement(f"{_ATTR} = {_HELPER}\n").with_changes(
            leading_lines=[cst.EmptyLine(indent=True, comment=cst.Comment(_COMMENT))])
        if at < len(body) and not _starts_with_blank(body[at]):  # a blank line between it and what follows it
            body[at] = body[at].with_changes(leading_lines=[cst.EmptyLine(indent=False), *body[at].leading_lines])
        self.needed = True
        return updated_node.with_changes(body=updated_node.body.with_changes(body=[*body[:at], line, *body[at:]]))


def _append_param(params: cst.Parameters, param: cst.Param) -> cst.Parameters:
    """`params` with `param` last (keyword-only after a `*args`), in the signature's layout: one per line with a
    trailing comma stays so."""
    star = [params.star_arg] if isinstance(params.star_arg, cst.Param) else []
    flat = append_items([*params.params, *star, *params.kwonly_params], [param])
    if not star and not params.kwonly_params:
        return params.with_changes(params=flat)
    n = len(params.params)
    return params.with_changes(params=flat[:n], star_arg=flat[n] if star else params.star_arg,
                               kwonly_params=flat[n + len(star):])


def _starts_with_blank(stmt: cst.BaseStatement) -> bool:
    lines = getattr(stmt, "leading_lines", ())
    return bool(lines) and lines[0].comment is None


def _docstring(stmt: cst.BaseStatement) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr) \
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))


class ComputeLossNumItems(PythonMigration):
    summary = "compute_loss overrides of transformers.Trainer subclasses: num_items_in_batch=None (passed since " \
              "4.46) and 4.45's loss scaling"
    triggers = ("compute_loss",)
    requires = ("Trainer",)

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        t = _Transformer(self, ctx)
        module = wrapper.visit(t)
        if not t.changed:
            return wrapper.module
        if t.needed:
            module = ensure_imports(module, [("compat.trl", _HELPER)])
        return module


MIGRATION = ComputeLossNumItems()
