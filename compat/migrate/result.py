"""What the engine hands back for one text: `Result`, and `MigrateError` for a file left untouched.

Its own module so that `engine` (one text) and `notebook` (a notebook's cells, through the engine's Python path) share
them without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from migrations.base import Finding

Kind = Literal["python", "notebook", "manifest", "python+manifest"]
ErrorKind = Literal[
    "read", "decode", "parse", "rule-crash", "rule-output", "not-idempotent", "encode", "write", "dirty", "changed-on-disk",
    "too-deep", "too-large", "too-slow", "not-regular", "read-only",
]


@dataclass(frozen=True)
class MigrateError:
    """Why a file was left untouched. `rule` names the rule at fault when there is one (a bug in that rule)."""

    kind: ErrorKind
    message: str
    rule: str | None = None
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        where = f"{self.line}:{self.column}: " if self.line else ""
        who = f"[{self.rule}] " if self.rule else ""
        return f"{where}{who}{self.kind}: {self.message}"


@dataclass
class Result:
    """What `migrate_source` made of one text.

    `text` is the new text (the original one when `errors` is not empty: nothing is ever half-migrated), `changed`
    says whether it differs, `findings` are the applied rewrites and the manual steps, `rules_applied` the ids of the
    rules that changed something, `parsed` whether the text got past the prefilter into a parser.
    """

    text: str
    changed: bool = False
    findings: list[Finding] = field(default_factory=list)
    errors: list[MigrateError] = field(default_factory=list)
    kind: Kind = "python"
    parsed: bool = False
    rules_applied: list[str] = field(default_factory=list)
    # distributions the rewritten code needs and did not before ("trl-compat": it now imports `compat`)
    needs: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def manual_steps(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "manual"]
