"""The doctor: ``python -m compat`` (also ``trl-compat doctor``) shows how the installed stack meets the floors.

Prints a table (package, installed, required for the detected TRL line, status, why), the notes on how the TRL line was
chosen, and the single ``pip install`` line that fixes every violation; then the platform, torch and whether CUDA is
available, and the requirements the installed TRL and its core dependencies declare in their own metadata
(``compat.stack``) against what is installed. ``--json`` prints the same report for machines.
Exit status: 0 when nothing violates the floors or a declared requirement (warnings allowed), 1 on any violation,
whatever ``TRL_COMPAT_CHECK`` says (that switch governs ``import compat``; the doctor always tells the truth).

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
from compat.stack import SHOWN, Declared, declared_requirements, fix_command, platform_facts

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


def render_stack(facts: dict[str, object], declared: Sequence[Declared], show_all: bool = False) -> str:
    """The platform, torch and CUDA, and the requirements the installed packages declare (failing ones always,
    the packages a raised pin pulls in always, the rest with --all)."""
    cuda = facts.get("cuda")
    if isinstance(cuda, dict):
        cuda_text = (f"CUDA {cuda.get('cuda_version')} available, {len(cuda.get('devices') or [])} device(s)"
                     + (f": {', '.join(cuda['devices'])}" if cuda.get("devices") else "")
                     if cuda.get("cuda_available") else "CUDA not available")
    else:
        cuda_text = f"CUDA {cuda}"
    lines = [f"platform: {facts['platform']} ({facts['machine']}), {facts['python']}",
             f"torch: {facts['torch'] or 'not installed'}, {cuda_text}", ""]
    rows = [d for d in declared if show_all or d.status != "ok" or d.package in SHOWN]
    if not rows:
        return "\n".join(lines)
    merged: dict[tuple[str, str], list[Declared]] = {}  # one row per package and status, every declarer named
    for d in rows:
        merged.setdefault((d.package, d.status), []).append(d)
    headers = ("declared", "installed", "required", "by", "status")
    cells = [(package, group[0].installed or "-", ",".join(dict.fromkeys(d.required for d in group if d.required != "any")) or "any",
              ", ".join(d.by for d in group), status) for (package, status), group in merged.items()]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]
    lines.append("  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip())
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    bad = [d for d in declared if d.status != "ok"]
    hidden = len({d.package for d in declared} - {d.package for d in rows})
    lines.append(f"({hidden} more declared package(s) met; --all lists them)" if hidden else "")
    if bad:
        lines.append(f"{len(bad)} declared requirement(s) not met. Fix: {fix_command(declared, _public(facts['torch']))}")
    return "\n".join(line for line in lines if line is not None)


def _public(version: object) -> str | None:
    return str(version).split("+", 1)[0] if version else None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the doctor; returns the exit status (0 fine, 1 violations)."""
    parser = argparse.ArgumentParser(
        prog=DOCTOR_COMMAND, description="Check the installed TRL stack against trl-compat's floors."
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--all", action="store_true", help="list every requirement the installed packages declare")
    parser.add_argument("--no-torch", action="store_true", help="do not import torch (in a child) to check CUDA")
    parser.add_argument("--version", action="version", version=f"trl-compat {__version__}")
    args = parser.parse_args(argv)
    report = check_environment()
    facts = platform_facts(probe_torch=not args.no_torch)
    declared = declared_requirements()
    declared_ok = all(d.status == "ok" for d in declared)
    if args.json:
        data = report.as_dict()
        data.update(platform=facts, declared=[d.as_dict() for d in declared],
                    declared_fix_command=fix_command(declared, _public(facts["torch"])))
        print(json.dumps(data, indent=2))
    else:
        print(render_table(report))
        print()
        print(render_stack(facts, declared, args.all))
    return 0 if report.ok and declared_ok else 1


if __name__ == "__main__":
    sys.exit(main())
