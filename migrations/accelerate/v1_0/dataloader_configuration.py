"""accelerate 1.0 removed `Accelerator(dispatch_batches=, even_batches=, use_seedable_sampler=)` and stopped reading
`split_batches=` (still a parameter in 1.15, read in the wheel: nothing uses it, `self.split_batches` comes from
`dataloader_config`), so on the stack TRL's floors force (accelerate >= 1.4) they either raise `TypeError` or are
silently ignored. Since 0.28 they are fields of `accelerate.DataLoaderConfiguration` (atlas: the same names in 0.28
and 1.15), passed as `Accelerator(dataloader_config=...)`.

The keywords are moved into `dataloader_config=DataLoaderConfiguration(...)` (same values, same meaning) when the
call has no `dataloader_config=` yet and every moved value is free of side effects (a literal, a name, an attribute),
so evaluation order does not matter; otherwise the call is marked.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import QualifiedNameProvider

from migrations.base import MigrationTransformer, PythonMigration, RuleContext
from migrations.kinds.cst import kwarg
from migrations.kinds.imports import ensure_imports, imported_names

ACCELERATORS = frozenset({"accelerate.Accelerator", "accelerate.accelerator.Accelerator"})
MOVED = ("split_batches", "dispatch_batches", "even_batches", "use_seedable_sampler")


def _pure(node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.Name, cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(node, cst.Attribute):
        return _pure(node.value)
    if isinstance(node, cst.UnaryOperation):
        return _pure(node.expression)
    return False


class _Transformer(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def __init__(self, rule: PythonMigration, ctx: RuleContext) -> None:
        super().__init__(rule, ctx)
        self.needs_import = False

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if not imported_names(self, original_node.func) & ACCELERATORS:
            return updated_node
        moved = [a for a in updated_node.args if a.keyword is not None and a.keyword.value in MOVED]
        if not moved:
            return updated_node
        names = ", ".join(f"{a.keyword.value}=" for a in moved)  # type: ignore[union-attr]
        if kwarg(updated_node, "dataloader_config") is not None or not all(_pure(a.value) for a in moved):
            self.todo(original_node, f"Accelerator({names}) is gone or ignored since accelerate 1.0: set them on "
                                     "DataLoaderConfiguration(...) passed as dataloader_config=")
            return updated_node
        inner = [cst.Arg(value=a.value, keyword=cst.Name(a.keyword.value),  # type: ignore[union-attr]
                         equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                               whitespace_after=cst.SimpleWhitespace("")),
                         comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")) if i < len(moved) - 1
                         else cst.MaybeSentinel.DEFAULT)
                 for i, a in enumerate(moved)]
        config = cst.Arg(value=cst.Call(func=cst.Name("DataLoaderConfiguration"), args=inner),
                         keyword=cst.Name("dataloader_config"),
                         equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                               whitespace_after=cst.SimpleWhitespace("")))
        kept = [a for a in updated_node.args if a not in moved]
        if kept:
            kept[-1] = kept[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        self.needs_import = True
        self.note(original_node, f"Accelerator({names}) -> dataloader_config=DataLoaderConfiguration({names})")
        return updated_node.with_changes(args=[*kept, config])


class DataloaderConfiguration(PythonMigration):
    summary = "Accelerator(split_batches=, dispatch_batches=, even_batches=) -> dataloader_config= (accelerate 1.0)"
    triggers = MOVED
    requires = ("accelerate",)

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        t = _Transformer(self, ctx)
        module = wrapper.visit(t)
        if not t.changed:
            return wrapper.module
        return ensure_imports(module, [("accelerate", "DataLoaderConfiguration")]) if t.needs_import else module


MIGRATION = DataloaderConfiguration()
