"""trl-api-leftovers: whatever TRL API use the rules left that the target rejects gets a marker at its statement.

Every rule before this one rewrites or marks the breaks it knows. This one runs after all of them (`order =
RUNS_LAST`: after every TRL rule of every release folder; it lives in 1.13's folder, so it applies to every supported
target 1.13-1.16) and asks `trl-compat check`'s
analyzer (`compat.check.analyze.Checker`, the API atlas of the target TRL and libraries) what is still wrong with the
file as rewritten: an import the target lacks, a keyword it rejects, a positional past its signature, a required
argument not passed. Each such TRL problem whose statement carries no `# TODO(trl-compat)` marker yet (on the
statement or in the comment block right above it) gets one, with the check's own message, so a file that does not
pass the check always says where and why (issue "whole repository": "every file that does not carries a marker at
the offending line"). Markers only, never a rewrite (safe).

Left to the library rules that run after the TRL rules: problems of transformers/peft/accelerate names, and config
keywords a TRL config inherits from `TrainingArguments` (`SFTConfig(warmup_ratio=)`), whose breaks are transformers'.
Notebooks are skipped (their cells share one namespace; the check of a notebook reads them together).
"""

from __future__ import annotations

from functools import lru_cache

import libcst as cst
from libcst.metadata import PositionProvider

from migrations.base import (
    RUNS_LAST,
    TODO_PREFIX,
    MigrationTransformer,
    PythonMigration,
    RuleContext,
)


@lru_cache(maxsize=8)
def _checker(trl: str, libraries: tuple[tuple[str, str], ...]):  # type: ignore[no-untyped-def]
    from compat.check.analyze import Checker

    return Checker(trl, libraries=dict(libraries) or None)


@lru_cache(maxsize=1)
def _training_arguments_fields() -> frozenset[str]:
    """Every field `transformers.TrainingArguments` had in some atlas release (the library rules own those)."""
    from migrations.atlas import Atlas

    atlas = Atlas.load("transformers")
    fields: set[str] = set()
    for release in atlas.releases():
        fields |= set(atlas.config_fields(release, "transformers.TrainingArguments") or {})
    return frozenset(fields)


def _ours(problem) -> bool:  # type: ignore[no-untyped-def]
    """A TRL problem no library rule will mark."""
    name = problem.name
    if not (name == "trl" or name.startswith("trl.")):
        return False
    if problem.code == "unknown-keyword" and "(" in name:
        keyword = name[name.index("(") + 1:].rstrip("=)")
        if keyword in _training_arguments_fields():
            return False
    return True


class _Transformer(MigrationTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, rule: PythonMigration, ctx: RuleContext, lines: dict[int, list[str]]) -> None:
        super().__init__(rule, ctx)
        self.lines = lines  # first line of a problem -> its messages

    def _leading_marked(self, node: cst.CSTNode) -> bool:
        return any(ln.comment is not None and ln.comment.value.startswith(TODO_PREFIX)
                   for ln in getattr(node, "leading_lines", ()))

    def _visit_statement(self, node: cst.CSTNode) -> None:
        pos = self.get_metadata(PositionProvider, node)
        # a compound statement owns the problems on its header line; its body's statements own theirs
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


class TrlApiLeftovers(PythonMigration):
    fix_safety = "safe"  # markers only
    summary = "what the TRL target still rejects after every rule (trl-compat check) -> marked at its statement"
    order = RUNS_LAST  # after every other TRL rule, of every release folder
    triggers = ("trl",)

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        module = wrapper.module
        if ctx.path and not ctx.path.endswith((".py", ".pyi")):
            return module
        options = ctx.options
        libraries = tuple((name, str(version)) for name, version in options.targets if name != "trl")
        try:
            problems = _checker(str(options.target_trl), libraries).check(module.code)
        except (SyntaxError, RecursionError, MemoryError, ValueError):
            return module
        lines: dict[int, list[str]] = {}
        for problem in problems:
            if _ours(problem):
                lines.setdefault(problem.line, []).append(problem.message)
        if not lines:
            return module
        t = _Transformer(self, ctx, lines)
        new = wrapper.visit(t)
        return new if t.changed else module


MIGRATION = TrlApiLeftovers()
