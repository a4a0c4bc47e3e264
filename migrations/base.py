"""The migration contract: what every rule in `migrations/` provides and what the engine gives it.

A rule knows TRL and nothing of files or the command line. The engine (`compat.migrate`) reads a file, parses it
once with libcst, and hands the tree to every selected rule in order. Two kinds of rule exist:

* `PythonMigration`: rewrites a Python module (also the code cells of a notebook). Its `transform` receives a
  `libcst.MetadataWrapper` over the current tree and a `RuleContext`, and returns the new module. Rules are usually
  written as a `MigrationTransformer` subclass, which knows how to put a TODO marker above the statement a node
  belongs to.
* `ManifestMigration`: rewrites a dependency manifest (requirements*.txt, pyproject.toml, setup.cfg, ...) as text.

A rule is cheap to skip: `triggers` are plain substrings, and a file containing none of them is never parsed for it.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import ClassVar, Literal

import libcst as cst
from libcst.metadata import PositionProvider
from packaging.version import Version

TODO_PREFIX = "# TODO(trl-compat):"
GUIDE = "MIGRATION.md"

Severity = Literal["manual", "warning", "info"]


@dataclass(frozen=True)
class Options:
    """What the user asked for, shared by every rule of one run."""

    target_trl: Version = Version("1.16.0")
    to: Literal["grpo", "online-dpo"] = "grpo"


@dataclass(frozen=True)
class Finding:
    """One thing a rule did or wants a human to do, at a position in the *original* file (1-based line/column)."""

    rule: str
    message: str
    line: int = 0
    column: int = 0
    anchor: str = ""
    severity: Severity = "manual"
    changed: bool = False  # True for an applied rewrite worth reporting, False for a manual step or warning
    cell: int | None = None  # notebooks: the 0-based index of the cell (in the notebook's `cells`); line is in it


@dataclass
class RuleContext:
    """Per-file state a rule may read and write: the options, the file's path, and the findings it reports."""

    options: Options = field(default_factory=Options)
    path: str | None = None
    findings: list[Finding] = field(default_factory=list)

    def report(self, finding: Finding) -> None:
        self.findings.append(finding)


class Migration:
    """Base of every rule: identity, the TRL release that forced it, and the trigger substrings."""

    id: ClassVar[str]  # stable public name, used by --only/--skip, e.g. "ppo-to-grpo"
    release: ClassVar[str]  # the TRL release that forced it, e.g. "1.13"
    summary: ClassVar[str]  # one line for --list
    anchor: ClassVar[str] = ""  # the MIGRATION.md section, e.g. "ppo-to-grpo"
    triggers: ClassVar[tuple[str, ...]] = ()
    # Optional second gate, for triggers that are common words outside TRL code (`pad_token`, `float32`, `losses`):
    # when set, a file must ALSO contain one of these substrings (typically `("trl",)`: a rule that resolves TRL
    # names through imports cannot apply to a file that never mentions `trl`).
    requires: ClassVar[tuple[str, ...]] = ()
    # Optional third gate, a regular expression that must also match (ASCII-only, so the engine can test it on the
    # raw bytes too): for rules whose trigger substrings are everywhere (`.float()`) but whose shape is rare.
    pattern: ClassVar[str | None] = None
    # The rule is needed by a target TRL at or above `release`; a rule may also stop applying at `until`
    # (exclusive), e.g. a rule that only makes sense while a name still exists.
    until: ClassVar[str | None] = None

    def applies(self, options: Options) -> bool:
        """True when a run targeting `options.target_trl` needs this rule."""
        target = Version(options.target_trl.base_version)
        if target < Version(self.release):
            return False
        return self.until is None or target < Version(self.until)

    def triggered_by(self, text: str) -> bool:
        """The cheap prefilter: any trigger substring, and (if set) any `requires` substring and a `pattern` match."""
        return (
            any(t in text for t in self.triggers)
            and (not self.requires or any(r in text for r in self.requires))
            and (self.pattern is None or _compiled(self.pattern).search(text) is not None)
        )


@functools.lru_cache(maxsize=None)
def _compiled(pattern: str | bytes) -> re.Pattern:
    return re.compile(pattern)


class PythonMigration(Migration):
    """A rule over one Python module.

    Either override `transform`, or set `transformer` to a `MigrationTransformer` subclass and keep the default
    `transform`, which runs it over the wrapper and hands back `wrapper.module` itself when nothing changed.

    Contract with the engine (`compat.migrate`): the engine passes the *same* wrapper to consecutive rules while the
    tree is unchanged, so metadata a rule resolves (e.g. `QualifiedNameProvider`) is computed once per file and
    shared. Return `wrapper.module` itself (the same object) when the rule changed nothing: the engine then skips a
    code comparison. Never mutate nodes in place and never put one node object at two places in the returned tree
    (the engine re-wraps the result without a deep copy).
    """

    transformer: ClassVar[type[MigrationTransformer] | None] = None

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        if self.transformer is None:
            raise NotImplementedError(f"{type(self).__name__} sets neither `transformer` nor `transform`")
        visitor = self.transformer(self, ctx)
        new = wrapper.visit(visitor)
        return new if visitor.changed else wrapper.module


class ManifestMigration(Migration):
    """A rule over one dependency manifest, as text.

    `patterns` are fnmatch globs: one without a `/` matches the file's base name (`requirements*.txt`), one with a `/`
    matches the path's trailing components (`requirements/*.txt`: the files a `-r requirements/base.txt` names).
    """

    patterns: ClassVar[tuple[str, ...]] = ()

    def matches(self, path: str) -> bool:
        parts = path.replace("\\", "/").split("/")
        for pattern in self.patterns:
            depth = pattern.count("/") + 1
            if len(parts) >= depth and fnmatch.fnmatch("/".join(parts[-depth:]), pattern):
                return True
        return False

    def rewrite(self, text: str, filename: str, ctx: RuleContext) -> str:
        raise NotImplementedError


def todo_text(message: str, anchor: str) -> str:
    """The exact marker line (without indentation) for a manual step."""
    link = f" (see {GUIDE}#{anchor})" if anchor else ""
    return f"{TODO_PREFIX} {message}{link}"


def add_todo_lines(stmt: cst.CSTNode, texts: list[str]) -> cst.CSTNode:
    """Return `stmt` with one comment line per text above it, skipping any marker already present (idempotent)."""
    leading = list(getattr(stmt, "leading_lines", ()))
    present = {line.comment.value for line in leading if line.comment is not None}
    new = [cst.EmptyLine(comment=cst.Comment(t)) for t in dict.fromkeys(texts) if t not in present]
    if not new:
        return stmt
    return stmt.with_changes(leading_lines=[*leading, *new])


class MigrationTransformer(cst.CSTTransformer):
    """A CSTTransformer that can mark any node with a TODO placed above the statement enclosing it.

    Call `self.todo(node, message, anchor)` from any visit/leave method (with an *original* node, so its position
    is known). The marker is added when the enclosing statement is left, and a `Finding` is reported.
    Subclasses that override `on_visit`/`on_leave` must call `super()`.

    Positions are resolved lazily: `PositionProvider` costs more than parsing the file, so it is computed (once per
    tree, cached by the wrapper) only when a rule reports something. Use `self.position(node)` rather than
    `self.get_metadata(PositionProvider, node)` unless you declare `PositionProvider` yourself.

    `self.changed` is True once any leave method returned something other than the node it was given (or a marker
    was added); the default `PythonMigration.transform` uses it to return the original module when nothing changed.
    """

    METADATA_DEPENDENCIES = ()

    def __init__(self, rule: Migration, ctx: RuleContext) -> None:
        super().__init__()
        self.rule = rule
        self.ctx = ctx
        self.changed = False
        self._wrapper: cst.MetadataWrapper | None = None
        self._stmt_stack: list[cst.CSTNode] = []
        self._pending: dict[int, list[str]] = {}
        self._first_stmt: cst.CSTNode | None = None
        self._header_comments: set[str] = set()

    @contextmanager
    def resolve(self, wrapper: cst.MetadataWrapper) -> Iterator[None]:  # type: ignore[override]
        self._wrapper = wrapper
        try:
            with super().resolve(wrapper):
                yield
        finally:
            self._wrapper = None

    # -- position & reporting ---------------------------------------------------------------------------
    def position(self, node: cst.CSTNode) -> tuple[int, int]:
        """1-based (line, column) of an *original* node; (0, 0) when unknown (e.g. a node the rule built)."""
        try:
            pos = self.get_metadata(PositionProvider, node).start
        except KeyError:
            if self._wrapper is None:
                return (0, 0)
            pos_map = self._wrapper.resolve(PositionProvider)
            if node not in pos_map:
                return (0, 0)
            pos = pos_map[node].start
        return (pos.line, pos.column + 1)

    def note(self, node: cst.CSTNode, message: str, *, severity: Severity = "info", changed: bool = True) -> None:
        """Report an applied rewrite (or a warning) without adding a marker."""
        line, col = self.position(node)
        self.ctx.report(Finding(self.rule.id, message, line, col, self.rule.anchor, severity, changed))

    def todo(self, node: cst.CSTNode, message: str, anchor: str | None = None) -> None:
        """Ask a human to do something about `node`: a marker above its statement and a manual finding."""
        anchor = self.rule.anchor if anchor is None else anchor
        line, col = self.position(node)
        self.ctx.report(Finding(self.rule.id, message, line, col, anchor, "manual", False))
        if self._stmt_stack:
            self._pending.setdefault(id(self._stmt_stack[-1]), []).append(todo_text(message, anchor))

    # -- statement tracking -----------------------------------------------------------------------------
    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Module):
            # libcst puts every comment above a module's first statement into `Module.header`, so a marker placed
            # above the first statement is found there on the next run (not in the statement's leading_lines).
            self._first_stmt = node.body[0] if node.body else None
            self._header_comments = {line.comment.value for line in node.header if line.comment is not None}
        if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            self._stmt_stack.append(node)
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):  # type: ignore[override]
        result = super().on_leave(original_node, updated_node)
        if result is not updated_node and result is not original_node:
            self.changed = True
        if isinstance(original_node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            self._stmt_stack.pop()
            texts = self._pending.pop(id(original_node), None)
            if texts and original_node is self._first_stmt:
                texts = [t for t in texts if t not in self._header_comments]
            if texts and isinstance(result, cst.CSTNode):
                marked = add_todo_lines(result, texts)
                self.changed = self.changed or marked is not result
                result = marked
            elif texts and isinstance(result, cst.FlattenSentinel) and result.nodes:
                first, *rest = result.nodes
                result = cst.FlattenSentinel([add_todo_lines(first, texts), *rest])
                self.changed = True
        return result
