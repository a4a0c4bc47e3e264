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


def assert_no_successor(rule: Migration, module: str, name: str, release: str) -> None:
    """A removed TRL module with no successor: the import and each use get a marker, the code stays as it is."""
    src = f"from {module} import {name}\n\n\ntrainer = {name}(model)\n"
    out, findings = run(rule, src)
    lines = out.splitlines()
    assert lines[0].startswith(f"# TODO(trl-compat): {module} was removed in TRL {release}")
    assert lines[0].endswith(f"(see MIGRATION.md#{rule.anchor})")
    assert lines[1] == f"from {module} import {name}"
    assert lines[4].startswith("# TODO(trl-compat):") and lines[5] == f"trainer = {name}(model)"
    assert len(findings) == 2 and not any(f.changed for f in findings)
