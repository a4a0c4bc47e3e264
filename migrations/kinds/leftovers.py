"""Leftover markers: whatever `trl-compat check` still finds in a rewritten file gets one marker at its statement.

The two "leftovers" rules (`trl-api-leftovers` for TRL names, `stack-api-leftovers` for transformers/peft/accelerate
names) run after every other rule of their library, ask the static check's analyzer (`compat.check.analyze.Checker`,
from the API atlas) what the target still rejects, and mark each problem whose statement carries no
`# TODO(trl-compat)` marker yet (on the statement or in the comment block right above it). This module holds what
they share:

* `checker(trl, libraries)`: a cached `Checker` for one TRL release and the library releases given;
* `trl_owned(problem)`: whether a problem is TRL's (`trl-api-leftovers` marks it) or the stack's: a TRL config keyword
  inherited from `transformers.TrainingArguments` (`SFTConfig(warmup_ratio=)`) breaks with transformers, so it is the
  stack's;
* `LeftoverMarker`: the transformer that puts one marker per statement, given first line -> messages.

Markers only, never a rewrite.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

import libcst as cst
from libcst.metadata import PositionProvider

from migrations.base import TODO_PREFIX, Migration, MigrationTransformer, RuleContext

if TYPE_CHECKING:
    from compat.check.analyze import Checker, Problem

__all__ = ["LeftoverMarker", "callable_and_keyword", "checker", "mark_lines", "trl_owned"]


@lru_cache(maxsize=8)
def checker(trl: str, libraries: tuple[tuple[str, str], ...]) -> Checker:
    """The static check's analyzer for TRL `trl` and the (library, release) pairs given (cached)."""
    from compat.check.analyze import Checker

    return Checker(trl, libraries=dict(libraries) or None)


@lru_cache(maxsize=1)
def _training_arguments_fields() -> frozenset[str]:
    """Every field `transformers.TrainingArguments` had in some atlas release."""
    from migrations.atlas import Atlas

    atlas = Atlas.load("transformers")
    fields: set[str] = set()
    for release in atlas.releases():
        fields |= set(atlas.config_fields(release, "transformers.TrainingArguments") or {})
    return frozenset(fields)


def callable_and_keyword(problem: Problem) -> tuple[str, str | None]:
    """(the callable, the keyword) an `unknown-keyword` problem names (`trl.SFTConfig(warmup_ratio=)` ->
    `("trl.SFTConfig", "warmup_ratio")`); (the name, None) for any other problem."""
    name = problem.name
    if problem.code != "unknown-keyword" or "(" not in name:
        return name, None
    return name[: name.index("(")], name[name.index("(") + 1:].rstrip("=)")


def trl_owned(problem: Problem) -> bool:
    """A problem of a TRL name that is not a keyword inherited from `TrainingArguments` (those are the stack's)."""
    name = problem.name
    if not (name == "trl" or name.startswith("trl.")):
        return False
    keyword = callable_and_keyword(problem)[1]
    return keyword is None or keyword not in _training_arguments_fields()


class LeftoverMarker(MigrationTransformer):
    """Puts one marker above each statement that holds a problem line of `lines` (first line -> its messages),
    unless the statement is marked already; a compound statement owns the problems on its header line only."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, rule: Migration, ctx: RuleContext, lines: dict[int, list[str]]) -> None:
        super().__init__(rule, ctx)
        self.lines = lines

    def _leading_marked(self, node: cst.CSTNode) -> bool:
        return any(ln.comment is not None and ln.comment.value.startswith(TODO_PREFIX)
                   for ln in getattr(node, "leading_lines", ()))

    def _visit_statement(self, node: cst.CSTNode) -> None:
        pos = self.get_metadata(PositionProvider, node)
        start = pos.start.line
        end = start if isinstance(node, cst.BaseCompoundStatement) else pos.end.line
        hits = [line for line in self.lines if start <= line <= end]
        if not hits:
            return
        if self._leading_marked(node) or (node is self._first_stmt and self._header_comments
                                          and any(c.startswith(TODO_PREFIX) for c in self._header_comments)):
            for line in hits:
                self.lines.pop(line)
            return
        # one marker per statement; the finding lists every problem (the marker shows what fits)
        messages = [m for line in sorted(hits) for m in self.lines.pop(line)]
        self.todo(node, "; ".join(dict.fromkeys(messages)))

    def on_visit(self, node: cst.CSTNode) -> bool:
        visit = super().on_visit(node)  # the statement is on the stack `todo` marks
        if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            self._visit_statement(node)
        return visit


def mark_lines(rule: Migration, wrapper: cst.MetadataWrapper, ctx: RuleContext,
               lines: dict[int, list[str]]) -> cst.Module:
    """`wrapper`'s module with the problems of `lines` marked (`LeftoverMarker`); the same module when none is new."""
    if not lines:
        return wrapper.module
    t = LeftoverMarker(rule, ctx, lines)
    new = wrapper.visit(t)
    return new if t.changed else wrapper.module
