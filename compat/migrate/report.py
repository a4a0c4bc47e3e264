"""The machine-readable report: JSON (schema `trl-compat/migrate-report/1`) and SARIF 2.1.0.

JSON schema (one object; every key always present; documented in docs/migrate.md):

    schema        "trl-compat/migrate-report/1"
    tool          {"name": "trl-compat", "version": str}
    mode          "write" | "check" | "diff"
    target_trl    str, the TRL version the rules were chosen for
    rules         [str], ids of the selected rules, in run order
    fix_safety    {rule id: "safe" | "unsafe"} for the selected rules (ruff's classes; docs/migrate.md "Fix safety")
    totals        {"scanned", "parsed", "changed", "unchanged", "failed", "written", "manual_steps": int}
    refused_dirty {path: git state}, files the dirty-tree guard refused to write (then nothing was written)
    files         one object per file looked at, in walk order:
        path          str, as walked (relative to the current folder when the argument was)
        kind          "python" | "notebook" | "manifest" | "python+manifest"
        status        "changed" (rewritten, or would be with --check/--diff) | "unchanged" | "failed"
        written       bool
        parsed        bool, false when the trigger prefilter kept the file from the parser
        encoding      str | null, e.g. "utf-8", "utf-8-sig" (BOM), "iso-8859-1"; null when not decoded
        rules_applied [str], rules that changed the file
        needs         [str], distributions the rewritten file now needs ("trl-compat": it imports `compat`); the
                      same run adds them next to `trl` in the manifests that declare it
        findings      [{"rule", "severity": "manual"|"warning"|"info", "message", "line", "column" (1-based, 0 =
                        unknown), "cell" (notebook cell index or null), "anchor", "guide" ("MIGRATION.md#anchor" or
                        null), "url" (the guide section on the web, or null), "changed": bool (an applied rewrite), "fix_safety": "safe" | "unsafe" (the rule's) }]
        fix_safety    "safe" | "unsafe" | null: "unsafe" when any rule that changed the file is, null when unchanged
        errors        [{"kind", "message", "rule" (the rule at fault or null), "line", "column"}]
    ledger        {"left": int, "steps": [{"path", "line", "column", "cell", "rule", "message", "new"}]}: the manual
                  steps left, i.e. the `# TODO(trl-compat):` markers in the files as they are after the run (at
                  their current lines), plus, with --check/--diff, the ones the run would add ("new": true)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from migrations import all_migrations
from migrations.base import GUIDE, Finding, guide_url

from .engine import MigrateError
from .ledger import Step
from .runner import FileEntry, Report

SCHEMA = "trl-compat/migrate-report/1"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _version() -> str:
    try:
        from compat._version import __version__

        return str(__version__)
    except Exception:  # pragma: no cover
        return "0"


def fix_safety(rule_id: str) -> str:
    """The fix-safety class of a rule (`Migration.fix_safety`); "unsafe" for an id the registry does not know."""
    return _SAFETY.get(rule_id) or _safety_table().get(rule_id, "unsafe")


_SAFETY: dict[str, str] = {}


def _safety_table() -> dict[str, str]:
    if not _SAFETY:
        _SAFETY.update({m.id: m.fix_safety for m in all_migrations()})
    return _SAFETY


def file_safety(rules_applied: list[str] | tuple[str, ...]) -> str | None:
    """"unsafe" when any rule that changed the file is unsafe, "safe" when all are, None when none changed it."""
    if not rules_applied:
        return None
    return "unsafe" if any(fix_safety(r) == "unsafe" for r in rules_applied) else "safe"


def _finding(f: Finding) -> dict[str, Any]:
    return {
        "rule": f.rule,
        "severity": f.severity,
        "message": f.message,
        "line": f.line,
        "column": f.column,
        "cell": f.cell,
        "anchor": f.anchor,
        "guide": f"{GUIDE}#{f.anchor}" if f.anchor else None,
        "url": guide_url(f.anchor) if f.anchor else None,
        "changed": f.changed,
        "fix_safety": fix_safety(f.rule),
    }


def _error(e: MigrateError) -> dict[str, Any]:
    return {"kind": e.kind, "message": e.message, "rule": e.rule, "line": e.line, "column": e.column}


def _file(entry: FileEntry) -> dict[str, Any]:
    return {
        "path": entry.path,
        "kind": entry.kind,
        "status": entry.status,
        "written": entry.written,
        "parsed": entry.parsed,
        "encoding": entry.encoding,
        "rules_applied": list(entry.rules_applied),
        "needs": list(entry.needs),
        "fix_safety": file_safety(entry.rules_applied),
        "findings": [_finding(f) for f in entry.findings],
        "errors": [_error(e) for e in entry.errors],
    }


def to_json(report: Report, steps: Sequence[Step] = ()) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "tool": {"name": "trl-compat", "version": _version()},
        "mode": report.mode,
        "target_trl": report.target_trl,
        "rules": list(report.rules),
        "fix_safety": {r: fix_safety(r) for r in report.rules},
        "totals": report.totals,
        "refused_dirty": dict(report.refused_dirty),
        "files": [_file(e) for e in report.files],
        "ledger": {"left": len(steps), "steps": [s.to_json() for s in steps]},
    }


_LEVEL = {"manual": "warning", "warning": "warning", "info": "note"}


def to_sarif(report: Report, steps: Sequence[Step] = ()) -> dict[str, Any]:
    """SARIF 2.1.0: one run, a rule descriptor per migration (and one for engine errors), one result per finding."""
    known = {m.id: m for m in all_migrations()}
    used = {f.rule for e in report.files for f in e.findings} | set(report.rules)
    descriptors = []
    for rule_id in sorted(used):
        m = known.get(rule_id)
        text = m.summary if m else rule_id
        desc: dict[str, Any] = {"id": rule_id, "name": rule_id, "shortDescription": {"text": text}}
        if m is not None:
            desc["properties"] = {"trlRelease": m.release, "fixSafety": m.fix_safety}
            if m.anchor:
                desc["help"] = {"text": f"See {GUIDE}#{m.anchor} ({guide_url(m.anchor)})"}
                desc["helpUri"] = guide_url(m.anchor)
        descriptors.append(desc)
    descriptors.append({"id": "trl-compat/error", "name": "error",
                        "shortDescription": {"text": "trl-compat could not migrate this file"}})

    results = []
    for entry in report.files:
        uri = quote(entry.path.replace("\\", "/"))
        for f in entry.findings:
            location: dict[str, Any] = {"physicalLocation": {"artifactLocation": {"uri": uri}}}
            if f.line > 0 and f.cell is None:
                location["physicalLocation"]["region"] = {"startLine": f.line, "startColumn": max(f.column, 1)}
            message = f.message + (f" (cell {f.cell}, line {f.line})" if f.cell is not None else "")
            if f.anchor:
                message += f" — see {GUIDE}#{f.anchor} ({guide_url(f.anchor)})"
            result: dict[str, Any] = {
                "ruleId": f.rule,
                "level": _LEVEL.get(f.severity, "note"),
                "message": {"text": message},
                "locations": [location],
            }
            result["properties"] = {"fixSafety": fix_safety(f.rule)}
            if f.anchor:
                result["properties"]["guideUrl"] = guide_url(f.anchor)
            if f.cell is not None:
                result["properties"].update({"cell": f.cell, "cellLine": f.line})
            results.append(result)
        for e in entry.errors:
            location = {"physicalLocation": {"artifactLocation": {"uri": uri}}}
            if e.line > 0:
                location["physicalLocation"]["region"] = {"startLine": e.line, "startColumn": max(e.column, 1)}
            results.append({
                "ruleId": "trl-compat/error",
                "level": "error",
                "message": {"text": f"{e.kind}: {e.message}" + (f" (rule {e.rule})" if e.rule else "")},
                "locations": [location],
            })
    for s in steps:  # markers already in the files that no finding of this run stands for
        if s.new or s.matched:
            continue
        location = {"physicalLocation": {"artifactLocation": {"uri": quote(s.path.replace("\\", "/"))}}}
        if s.cell is None:
            location["physicalLocation"]["region"] = {"startLine": s.line, "startColumn": s.column}
        results.append({"ruleId": s.rule or "trl-compat/marker", "level": "warning",
                        "message": {"text": f"manual step left: {s.message}"
                                            + (f" (cell {s.cell}, line {s.line})" if s.cell is not None else "")},
                        "locations": [location]})
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "trl-compat", "version": _version(), "rules": descriptors}},
                "results": results,
                "properties": {"mode": report.mode, "targetTrl": report.target_trl, "totals": report.totals},
            }
        ],
    }


def dumps(report: Report, fmt: str = "json", steps: Sequence[Step] = ()) -> str:
    data = to_sarif(report, steps) if fmt == "sarif" else to_json(report, steps)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
