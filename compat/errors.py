"""The exception and warning ``import compat`` raises, and the one message format they share.

A violating environment gets **one** :class:`IncompatibleEnvironmentError` listing every violation at once (package,
installed version, required specifier, why) and a single ``pip install`` line that fixes them all, so users do not
fix one package per run. Every message names the ``TRL_COMPAT_CHECK`` switch.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing; type checkers treat it as True
if TYPE_CHECKING:
    from compat.environment import Report

ENV_VAR = "TRL_COMPAT_CHECK"
MODES = ("error", "warn", "off")
DOCTOR_COMMAND = "python -m compat"


class IncompatibleEnvironmentError(ImportError):
    """The installed packages violate the floors of the installed TRL line; ``report`` holds every finding."""

    def __init__(self, message: str, report: Report) -> None:
        super().__init__(message)
        self.report = report


class IncompatibleEnvironmentWarning(UserWarning):
    """Issued instead of :class:`IncompatibleEnvironmentError` when ``TRL_COMPAT_CHECK=warn`` (or for compat's tools)."""


def _describe_trl(report: Report) -> str:
    if report.trl_version is None:
        return f"no TRL installed, TRL {report.profile} floors"
    return f"trl {report.trl_version} installed, TRL {report.profile} floors"


def format_report(report: Report, *, mode: str = "error", tool: str | None = None) -> str:
    """The human message for a report's errors and warnings: one line per finding, then the single fix."""
    problems = report.errors + report.warnings
    if tool is not None:
        head = (
            f"trl-compat: `{tool}` runs anyway (compat's own tools must work before an upgrade), but this "
            f"environment violates the floors ({_describe_trl(report)}):"
        )
    elif report.errors:
        head = f"trl-compat: this environment violates the floors ({_describe_trl(report)}): {len(report.errors)} " + (
            "problem" if len(report.errors) == 1 else "problems"
        ) + (f" and {len(report.warnings)} warning(s):" if report.warnings else ":")
    else:
        head = f"trl-compat: {len(report.warnings)} warning(s) about this environment ({_describe_trl(report)}):"
    lines = [head]
    for f in problems:
        installed = "not installed" if f.installed is None else f.installed
        lines.append(f"  - [{f.status}] {f.package} {installed}, required {f.required}: {f.detail}. Why: {f.why}.")
    lines.extend(f"  note: {note}" for note in report.notes)
    python_errors = [f for f in report.errors if f.package == "python"]
    if report.fix_command:
        lines.append("Fix all at once:")
        lines.append(f"  {report.fix_command}")
    if python_errors:
        lines.append(f"Use a Python interpreter that satisfies {python_errors[0].required} (pip cannot fix that).")
    lines.append(
        f"Full table: `{DOCTOR_COMMAND}`. {ENV_VAR}=error (the default) raises, {ENV_VAR}=warn only warns, "
        f"{ENV_VAR}=off skips the check; now {ENV_VAR}={mode}."
    )
    return "\n".join(lines)
