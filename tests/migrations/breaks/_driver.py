"""Drive one rule over a source string through the engine (`compat.migrate.migrate_source`), with strict checks.

Every call asserts that the engine accepted the output (it re-parses it with libcst and `ast`) and that a second run
changes nothing (`verify_idempotent`). A rule the target TRL does not need is not run at all, as in a real run.
"""

from __future__ import annotations

import textwrap

from packaging.version import Version

from compat.migrate.engine import migrate_source
from migrations.base import Finding, Migration, Options


def run(rule: Migration, src: str, target: str = "1.16.0", dedent: bool = True,
        path: str = "example.py") -> tuple[str, list[Finding]]:
    """Apply `rule` to `src` for `--target-trl target`; returns (new source, findings)."""
    if dedent:
        src = textwrap.dedent(src)
    options = Options(target_trl=Version(target))
    if not rule.applies(options):
        return src, []
    result = migrate_source(src, options=options, rules=[rule], path=path, verify_idempotent=True)
    assert result.ok, result.errors
    return result.text, result.findings


def check(rule: Migration, before: str, after: str, target: str = "1.16.0") -> list[Finding]:
    out, findings = run(rule, before, target)
    assert out == textwrap.dedent(after), f"\n--- got ---\n{out}\n--- expected ---\n{textwrap.dedent(after)}"
    return findings


def noop(rule: Migration, src: str, target: str = "1.16.0") -> None:
    out, findings = run(rule, src, target)
    assert out == textwrap.dedent(src), f"expected no change, got:\n{out}"
    assert not [f for f in findings if f.changed], findings
