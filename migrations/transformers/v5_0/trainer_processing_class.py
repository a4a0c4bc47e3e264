"""transformers 5.0 removed `Trainer(tokenizer=)` (renamed `processing_class=` in 4.46, accepted as an alias
until 4.57 through `@deprecate_kwarg`, atlas: `Trainer.__init__` renamed ("tokenizer", "processing_class")), and
the `Trainer.tokenizer` property (4.46-4.57: a deprecated alias of `processing_class`).

`processing_class=` is a parameter on 4.56.2 and every 5.x: the rename is exact. Rewritten:

* calls of `transformers.Trainer` and `Seq2SeqTrainer` (every import form) with `tokenizer=`;
* calls of the project's own subclass of one (`class RewardTrainer(Trainer)`, chains of them, defined in the file or
  in a project module file it imports: `from .trainer import PairwiseTrainer`, at module level or inside the function
  that calls it), when no class on the way takes
  `tokenizer` itself (`migrations.kinds.trainer_subclasses`);
* `super().__init__(..., tokenizer=...)` (or `super(ThisClass, self).__init__`) / `Trainer.__init__(self, ...,
  tokenizer=...)` inside such a subclass; `Trainer.__init__(self, ..., tokenizer=...)` in any class (the copies of
  TRL 0.x's DPOTrainer subclassing TRL's and skipping its constructor: chuhac/ATM-RAG), the library's own method;
* `self.tokenizer` inside such a subclass, unless the class assigns `self.tokenizer` itself.

TRL's trainers have their own rule (`tokenizer-to-processing-class`). Marked: both keywords passed.
"""

from __future__ import annotations

import ast

import libcst as cst
from libcst.metadata import QualifiedNameProvider, ScopeProvider

from migrations.base import MigrationTransformer, PythonMigration, RuleContext
from migrations.kinds import grammar
from migrations.kinds.imports import imported_names
from migrations.kinds.trainer_subclasses import (
    TRAINERS,
    SelfAttributeAssigned,
    bound_at_module_level,
    function_imported_subclass,
    imported_subclasses,
    subclasses_in,
)

_NOTE = "transformers 5.0 removed the tokenizer= alias; processing_class= works since 4.46"


class _Transformer(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider, ScopeProvider)

    def __init__(self, rule: PythonMigration, ctx: RuleContext, tree: ast.Module | None) -> None:
        super().__init__(rule, ctx)
        self._tree = tree  # the module read with `ast` (None: `ast` refuses it, no project subclass is known)
        self._local: dict[str, str] = {}  # the project's subclasses reachable here: local name -> library trainer
        self._classes: list[tuple[str | None, bool]] = []  # per enclosing class: (its trainer base, own .tokenizer)
        self._class_names: list[tuple[str, int]] = []  # per enclosing class: (its name, functions around it)
        self._methods: list[tuple[bool, str | None]] = []  # per enclosing function: (a method of the innermost
        # class, its first parameter)
        self.changed = False

    def visit_Module(self, node: cst.Module) -> None:
        tree = self._tree
        if tree is None:
            return
        imported = imported_subclasses(tree, self.ctx.path, TRAINERS, "tokenizer")
        self._local = {**imported, **subclasses_in(tree, TRAINERS, "tokenizer", imported)}

    def _library(self, node: cst.CSTNode) -> str | None:
        return next(iter(sorted(imported_names(self, node) & TRAINERS)), None)

    def _base_of(self, expr: cst.BaseExpression) -> str | None:
        found = self._library(expr)
        if found is not None:
            return found
        if isinstance(expr, cst.Name) and expr.value in self._local and bound_at_module_level(self, expr):
            return self._local[expr.value]
        if isinstance(expr, cst.Name):
            return function_imported_subclass(self, expr, self.ctx.path, TRAINERS, "tokenizer")
        return None

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        # the class whose constructor its super().__init__ reaches: a library trainer, or a project subclass that
        # passes tokenizer= through (one that takes it itself is not in _local: its keyword is its own)
        base = self._base_of(node.bases[0].value) if len(node.bases) == 1 else None
        own = SelfAttributeAssigned("tokenizer")
        if base is not None:
            node.body.visit(own)
        self._classes.append((base, own.found))
        self._class_names.append((node.name.value, len(self._methods)))

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        self._classes.pop()
        self._class_names.pop()
        return updated_node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = node.params.posonly_params or node.params.params
        method = bool(self._class_names) and self._class_names[-1][1] == len(self._methods)
        self._methods.append((method, params[0].name.value if params else None))

    def leave_FunctionDef(self, original_node: cst.FunctionDef,
                          updated_node: cst.FunctionDef) -> cst.FunctionDef:
        self._methods.pop()
        return updated_node

    def _is_super(self, value: cst.BaseExpression) -> bool:
        """`super()`, or `super(C, self)` in a method of class C (the same MRO step, spelled out)."""
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "super"):
            return False
        if not value.args:
            return True
        if len(value.args) != 2 or any(a.keyword is not None or a.star for a in value.args) \
                or not self._methods or not self._class_names:
            return False
        method, first = self._methods[-1]
        cls, obj = value.args[0].value, value.args[1].value
        return (method and isinstance(cls, cst.Name) and cls.value == self._class_names[-1][0]
                and isinstance(obj, cst.Name) and obj.value == first)

    def _in_subclass(self) -> tuple[str | None, bool]:
        return self._classes[-1] if self._classes else (None, False)

    def _callee(self, call: cst.Call) -> str | None:
        found = self._base_of(call.func)
        if found is not None:
            return found
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "__init__":
            found = self._library(func.value)
            if found is not None:  # `Trainer.__init__(self, ...)` in any class (a copy of TRL 0.x's DPOTrainer
                return found  # subclassing trl's, bypassing its constructor): transformers' own __init__, exactly
        base, _own = self._in_subclass()
        if base is None or not (isinstance(func, cst.Attribute) and func.attr.value == "__init__"):
            return None
        value = func.value
        if self._is_super(value):
            return base
        if self._base_of(value) is not None:  # Trainer.__init__(self, ...)
            return base
        return None

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        trainer = self._callee(original_node)
        if trainer is None:
            return updated_node
        keywords = {a.keyword.value for a in updated_node.args if a.keyword is not None}
        if "tokenizer" not in keywords:
            return updated_node
        if "processing_class" in keywords:
            self.todo(original_node, f"both tokenizer= and processing_class= are passed; {_NOTE}")
            return updated_node
        args = [a.with_changes(keyword=cst.Name("processing_class"))
                if a.keyword is not None and a.keyword.value == "tokenizer" else a for a in updated_node.args]
        self.changed = True
        self.note(original_node, f"tokenizer= -> processing_class= ({_NOTE})")
        return updated_node.with_changes(args=args)

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        if original_node.attr.value != "tokenizer" or not isinstance(original_node.value, cst.Name) \
                or original_node.value.value != "self":
            return updated_node
        base, own = self._in_subclass()
        if base is None or own:
            return updated_node
        self.changed = True
        self.note(original_node, "self.tokenizer -> self.processing_class (transformers 5.0 removed Trainer.tokenizer)")
        return updated_node.with_changes(attr=cst.Name("processing_class"))


def _names_tokenizer(node: ast.AST) -> bool:
    """A `tokenizer=` keyword or a `.tokenizer` attribute."""
    if isinstance(node, ast.keyword):
        return node.arg == "tokenizer"
    return isinstance(node, ast.Attribute) and node.attr == "tokenizer"


class TrainerProcessingClass(PythonMigration):
    summary = "transformers.Trainer(tokenizer=) -> processing_class= (removed in 5.0), subclasses included"
    triggers = ("tokenizer",)
    # a file calling a project subclass imported from another module may not mention transformers at all; such a
    # subclass is nearly always named `...Trainer`
    requires = ("transformers", "Trainer")

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        """The transformer, unless the module has no `tokenizer=` keyword and no `.tokenizer` attribute (read with
        `ast`, which the transformer needs anyway): the only nodes it rewrites or marks. The trigger `tokenizer`
        lets in every file that names a tokenizer variable; this skips the metadata the transformer would resolve
        for nothing there (an `ast` name is the NFKC form of libcst's, so an ASCII `tokenizer` is found by both)."""
        try:
            tree: ast.Module | None = grammar.parse(ctx.module_code(wrapper))
        except (SyntaxError, ValueError):
            tree = None
        if tree is not None and not any(_names_tokenizer(n) for n in ast.walk(tree)):
            return wrapper.module
        visitor = _Transformer(self, ctx, tree)
        new = wrapper.visit(visitor)
        return new if visitor.changed else wrapper.module


MIGRATION = TrainerProcessingClass()
