"""The doctor: ``python -m compat`` (also ``trl-compat doctor``) shows how the installed stack meets the floors.

Prints a table (package, installed, required for the detected TRL line, status, why), the notes on how the TRL line was
chosen, and the single ``pip install`` line that fixes every violation. ``--json`` prints the same report for machines.
Exit status: 0 when nothing violates the floors (warnings allowed), 1 on any violation, whatever ``TRL_COMPAT_CHECK``
says (that switch governs ``import compat``; the doctor always tells the truth).

It runs in a violating environment on purpose: ``import compat`` recognises the doctor and does not raise.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from compat import __version__
from compat.environment import Report, check_environment
from compat.errors import DOCTOR_COMMAND, ENV_VAR

_HEADERS = ("package", "installed", "required", "status", "why")


def render_table(report: Report) -> str:
    """The report as an aligned plain-text table plus notes and the fix line."""
    rows = [
        (
            f.package,
            "-" if f.installed is None else f.installed,
            f.required,
            f.status if f.status != "absent" else "ok (not installed)",
            f.why if f.status == "ok" or f.status == "absent" else f"{f.detail}. {f.why}",
        )
        for f in report.findings
    ]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(_HEADERS[:-1])]

    def fmt(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells[:-1], widths)) + "  " + cells[-1]

    trl = f"trl {report.trl_version}" if report.trl_version else "no TRL installed"
    lines = [
        f"trl-compat {__version__} doctor: {trl}, Python {report.python_version}; floors of TRL {report.profile}",
        "",
        fmt(_HEADERS),
        fmt(["-" * w for w in widths] + ["-" * 3]),
    ]
    lines.extend(fmt(r) for r in rows)
    lines.append("")
    lines.extend(f"note: {n}" for n in report.notes)
    if report.errors:
        lines.append(f"{len(report.errors)} violation(s). Fix all at once:")
        lines.append(f"  {report.fix_command}" if report.fix_command else "  (use a newer Python interpreter)")
    else:
        lines.append(f"OK: no violations ({len(report.warnings)} warning(s)).")
    lines.append(f"`import compat` raises on violations unless {ENV_VAR}=warn or {ENV_VAR}=off.")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the doctor; returns the exit status (0 fine, 1 violations)."""
    parser = argparse.ArgumentParser(
        prog=DOCTOR_COMMAND, description="Check the installed TRL stack against trl-compat's floors."
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--version", action="version", version=f"trl-compat {__version__}")
    args = parser.parse_args(argv)
    report = check_environment()
    if args.json:
        print(json.dumps(report.as_dict(), indent=2))
    else:
        print(render_table(report))
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
