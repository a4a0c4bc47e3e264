"""The ledger of a migrate run: every manual step left, at its position in the file as it is now.

After a run, every file the run looked at is scanned for ``# TODO(trl-compat):`` markers (:mod:`compat.markers`,
the scanner ``trl-compat check`` uses) as it is on disk: after an in-place write that is the new text, so the
positions are those of the file as written; with ``--check``/``--diff`` nothing was written and the ledger is the
markers already there plus the manual steps the run would mark (the rules' findings, at their current positions).

A manual finding of this run is matched to the marker its rule wrote (same notebook cell, and the marker names the
rule, links to the rule's anchor, or carries the finding's message; nearest first). In write mode a matched finding
is moved to its marker's line and column, so every output (text, JSON, SARIF) points into the written file.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

from compat.markers import Marker, scan_file
from migrations.base import ELLIPSIS, GUIDE

from .runner import Report


@dataclass(frozen=True)
class Step:
    """One manual step left: a marker in the file now, or (``new``) one the run would add."""

    path: str
    line: int
    column: int
    cell: int | None
    rule: str | None
    message: str  # a finding's whole message (new steps, and markers this run reported); else the marker's text
    new: bool = False  # --check/--diff: a manual step of this run, not in the file yet
    matched: bool = False  # a marker this run's rules reported (so it is in the report's findings too)
    anchor: str | None = None  # the guide anchor: the finding's, or the marker's rule's

    def to_json(self) -> dict:
        return {"path": self.path, "line": self.line, "column": self.column, "cell": self.cell, "rule": self.rule,
                "message": self.message, "new": self.new}

    def text(self) -> str:
        """`path:line:col: manual: [rule] message`, the way the migrator prints manual steps."""
        if self.cell is None:
            where = f"{self.path}:{self.line}:{self.column}"
        else:
            where = f"{self.path}:cell {self.cell}:{self.line}"
        guide = f" (see {GUIDE}#{self.anchor})" if self.anchor else ""
        rule = f"[{self.rule}] " if self.rule and not self.message.startswith(f"[{self.rule}]") else ""
        return f"{where}: manual: {rule}{self.message}{guide}"


def _anchor(marker: Marker) -> str | None:
    """The guide anchor of a marker this run did not report: its rule's, for a new-format marker (`[rule-id]` at the
    end); None for an old-format one (its text still carries the link) or an unknown rule."""
    if marker.rule is None or "MIGRATION.md#" in marker.message:
        return None
    from migrations import all_migrations

    rule = next((r for r in all_migrations() if r.id == marker.rule), None)
    return rule.anchor if rule is not None else None


def _matches(marker: Marker, finding) -> bool:
    if marker.cell != finding.cell:
        return False
    if marker.rule is not None and marker.rule in (finding.rule, finding.anchor):
        return True
    if not finding.message:
        return False
    summary = marker.message.removesuffix(ELLIPSIS).rstrip()  # a marker holds a cut of the message (fit_marker)
    return finding.message[:60] in marker.message or (len(summary) >= 16 and finding.message.startswith(summary))


def _match(markers: list[Marker], findings: list) -> dict[int, Marker]:
    """finding index -> its marker (each marker used once, nearest line first)."""
    used: set[int] = set()
    out: dict[int, Marker] = {}
    for i, f in sorted(enumerate(findings), key=lambda x: (x[1].cell or 0, x[1].line)):
        candidates = [(abs(m.line - f.line), j) for j, m in enumerate(markers) if j not in used and _matches(m, f)]
        if candidates:
            _, j = min(candidates)
            used.add(j)
            out[i] = markers[j]
    return out


def build(report: Report) -> list[Step]:
    """The ledger of `report` (relocating matched manual findings in write mode, see the module docstring)."""
    steps: list[Step] = []
    for entry in report.files:
        markers = scan_file(entry.path) if os.path.isfile(entry.path) else []
        manual = [(k, f) for k, f in enumerate(entry.findings) if f.severity == "manual"]
        matched = _match(markers, [f for _, f in manual])
        if report.mode == "write" and entry.written:
            for i, marker in matched.items():
                k, f = manual[i]
                entry.findings[k] = dataclasses.replace(f, line=marker.line, column=marker.column)
        by_marker = {id(m): manual[i][1] for i, m in matched.items()}
        for m in markers:
            f = by_marker.get(id(m))
            if f is not None:  # the marker holds a cut of the message (fit_marker): show the finding's whole text
                steps.append(Step(entry.path, m.line, m.column, m.cell, f.rule, f.message, matched=True,
                                  anchor=f.anchor or None))
            else:
                steps.append(Step(entry.path, m.line, m.column, m.cell, m.rule, m.message, anchor=_anchor(m)))
        for i, (_, f) in enumerate(manual):
            if i in matched:
                continue
            steps.append(Step(entry.path, f.line, f.column, f.cell, f.rule, f.message, new=True, anchor=f.anchor))
    return steps
