"""`python -m compat.migrate PATH...` (also `trl-compat migrate`): the command line over `migrate_paths`.

Output contract: diffs (`--diff`) and the list of files that would change (`--check`) go to stdout, so they can be
piped (`python -m compat.migrate --diff . | git apply`); everything for humans (what was rewritten, manual steps,
errors, the summary, the progress bar) goes to stderr. Exit codes: 0 nothing to do or all written, 1 changes needed
(`--check`/`--diff`), 2 a file failed, the dirty-tree guard refused, or bad usage.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

from packaging.version import InvalidVersion, Version

from migrations import all_migrations, select
from migrations.base import GUIDE, TODO_PREFIX, Options

from .report import dumps, fix_safety
from .runner import FileEntry, Report, migrate_paths
from .target import detect_target


class _UsageError(Exception):
    pass


def _ids(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog or "python -m compat.migrate",
        description="Rewrite a repository's code for a newer TRL, in place, safely; mark what needs a human with "
        f"`{TODO_PREFIX} ... (see {GUIDE}#...)`.",
        epilog="exit codes: 0 nothing to do or all written; 1 changes needed (--check/--diff); 2 a file failed, "
        "the dirty-tree guard refused, or bad usage.",
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: .)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--diff", action="store_true", help="print a unified diff (git apply accepts it), write nothing")
    mode.add_argument("--check", action="store_true", help="write nothing, list the files that would change")
    parser.add_argument("--list", action="store_true", help="list every migration (id, TRL release, summary) and exit")
    parser.add_argument("--only", type=_ids, default=[], metavar="ID,...", help="run only these migrations")
    parser.add_argument("--skip", type=_ids, default=[], metavar="ID,...", help="do not run these migrations")
    parser.add_argument("--target-trl", metavar="VERSION",
                        help="the TRL to migrate to (default: what the repo's trl pins allow, else the newest known)")
    parser.add_argument("--to", choices=("grpo", "online-dpo"), default="grpo",
                        help="what PPO code becomes (default: grpo)")
    parser.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                        help="gitignore-style pattern to skip (repeatable)")
    parser.add_argument("--allow-dirty", action="store_true", help="write files that have uncommitted changes")
    parser.add_argument("-j", "--jobs", type=int, metavar="N",
                        help="worker processes (default: as many as pay off for the number of candidate files)")
    unsafe = parser.add_mutually_exclusive_group()
    unsafe.add_argument("--unsafe-fixes", dest="unsafe_fixes", action="store_true", default=True,
                        help="apply unsafe rules too (the default: see 'Fix safety' in docs/migrate.md)")
    unsafe.add_argument("--no-unsafe-fixes", dest="unsafe_fixes", action="store_false",
                        help="apply only safe rules (behaviour-preserving); unsafe ones are listed, not run")
    parser.add_argument("-q", "--quiet", action="store_true", help="print only errors (and --diff/--check output)")
    parser.add_argument("--report", metavar="FILE", help="write a machine-readable report to FILE ('-' = stdout)")
    parser.add_argument("--format", choices=("json", "sarif"), default="json", help="report format (default: json)")
    return parser


def _list(out: TextIO) -> None:
    rules = all_migrations()
    width = max((len(m.id) for m in rules), default=2)
    out.write(f"{'id'.ljust(width)}  trl    fixes   summary\n")
    for m in rules:
        out.write(f"{m.id.ljust(width)}  {m.release.ljust(5)}  {m.fix_safety.ljust(6)}  {m.summary}\n")


class _Progress:
    """A transient rich progress bar on stderr, only on a terminal (and never with --quiet)."""

    def __init__(self, enabled: bool) -> None:
        self._bar = None
        self._task = None
        if not enabled:
            return
        try:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
        except ImportError:  # rich is optional: no bar then
            return
        self._bar = Progress(TextColumn("migrating"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                             console=Console(file=sys.stderr), transient=True)

    def start(self, total: int) -> None:
        if self._bar is not None and total:
            self._bar.start()
            self._task = self._bar.add_task("files", total=total)

    def advance(self, _entry: FileEntry) -> None:
        if self._bar is not None and self._task is not None:
            self._bar.advance(self._task)

    def stop(self) -> None:
        if self._bar is not None and self._task is not None:
            self._bar.stop()
            self._task = None


def main(argv: Sequence[str] | None = None, *, prog: str | None = None) -> int:
    """Run the migrator with command-line arguments; returns the exit code."""
    parser = build_parser(prog)
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:  # argparse: --help (0) or bad usage (2)
        return int(exc.code or 0)
    out, err = sys.stdout, sys.stderr
    if args.list:
        _list(out)
        return 0
    paths = args.paths or ["."]
    try:
        rules, options, target_note = _choose(args, paths)
    except _UsageError as exc:
        err.write(f"error: {exc}\n")
        return 2
    if args.jobs is not None and args.jobs < 1:
        err.write("error: -j/--jobs must be at least 1\n")
        return 2

    mode = "diff" if args.diff else "check" if args.check else "write"
    if not args.quiet:
        err.write(f"target TRL {options.target_trl} ({target_note}); {len(rules)} migration(s)\n")
    progress = _Progress(enabled=err.isatty() and not args.quiet)
    try:
        report = migrate_paths(paths, options=options, rules=rules, mode=mode, exclude=args.exclude,
                               jobs=args.jobs, allow_dirty=args.allow_dirty, on_start=progress.start,
                               on_file=progress.advance)
    except KeyboardInterrupt:
        progress.stop()
        err.write("interrupted: every file is either fully rewritten or untouched\n")
        return 130
    finally:
        progress.stop()
    _print(report, args.quiet, out, err)
    if args.report:
        text = dumps(report, args.format)
        if args.report == "-":
            out.write(text)
        else:
            with open(args.report, "w", encoding="utf-8") as fh:
                fh.write(text)
    return report.exit_code


def _choose(args: argparse.Namespace, paths: list[str]) -> tuple[tuple, Options, str]:
    known = {m.id for m in all_migrations()}
    unknown = [i for i in (*args.only, *args.skip) if i not in known]
    if unknown:
        raise _UsageError(
            f"unknown migration id(s): {', '.join(unknown)}; known: {', '.join(sorted(known)) or '(none)'} "
            "(see --list)"
        )
    if args.target_trl:
        try:
            target = Version(args.target_trl)
        except InvalidVersion:
            raise _UsageError(f"--target-trl {args.target_trl!r} is not a version (e.g. 1.16 or 1.14.2)") from None
        note = "from --target-trl"
    else:
        choice = detect_target(paths)
        target, note = choice.version, choice.source
    options = Options(target_trl=target, to=args.to)
    rules = select(options, args.only, args.skip)
    if not args.unsafe_fixes:
        held = [m.id for m in rules if m.fix_safety != "safe"]
        rules = tuple(m for m in rules if m.fix_safety == "safe")
        if held:
            note += f"; --no-unsafe-fixes: not running unsafe {', '.join(held)}"
    return rules, options, note


def _safety_line(rules_applied: Sequence[str]) -> str:
    """`unsafe [ppo-to-grpo, value-head-models], safe [deprecated-import-paths]` for one changed file."""
    parts = []
    for cls in ("unsafe", "safe"):
        ids = [r for r in rules_applied if fix_safety(r) == cls]
        if ids:
            parts.append(f"{cls} [{', '.join(ids)}]")
    return ", ".join(parts)


def _print(report: Report, quiet: bool, out: TextIO, err: TextIO) -> None:
    for entry in report.files:
        if entry.status == "changed":
            if report.mode == "diff" and entry.diff:
                out.flush()
                out.buffer.write(entry.diff) if hasattr(out, "buffer") else out.write(entry.diff.decode("utf-8", "replace"))
            elif report.mode == "check":
                out.write(f"would rewrite {entry.path}\n")
            elif entry.written and not quiet:
                err.write(f"rewrote {entry.path}\n")
            if not quiet and entry.rules_applied:
                err.write(f"{entry.path}: fixes: {_safety_line(entry.rules_applied)}\n")
        for e in entry.errors:
            err.write(f"{entry.path}: error: {e}\n")
        if not quiet:
            for f in entry.findings:
                if f.severity == "info":
                    continue
                where = f"{entry.path}:{f.line}:{f.column}" if f.cell is None else f"{entry.path}:cell {f.cell}:{f.line}"
                guide = f" (see {GUIDE}#{f.anchor})" if f.anchor else ""
                err.write(f"{where}: {f.severity}: [{f.rule}] {f.message}{guide}\n")
    out.flush()
    if report.refused_dirty:
        err.write(
            f"refused to write: {len(report.refused_dirty)} file(s) have uncommitted changes and nothing was written:\n"
        )
        for path, state in report.refused_dirty.items():
            err.write(f"  {path} ({state})\n")
        err.write("commit or stash them first (so the migration can be reviewed and undone), or pass --allow-dirty\n")
    if quiet:
        return
    t = report.totals
    # a refused write wrote nothing: never call its files changed
    verb = "would change" if report.mode != "write" else "would change (nothing written)" if report.refused_dirty \
        else "changed"
    err.write(
        f"{t['scanned']} file(s) scanned ({t['parsed']} parsed): {t['changed']} {verb}, {t['unchanged']} "
        f"unchanged, {t['failed']} failed; {t['manual_steps']} manual step(s) left"
        + (f" (marked `{TODO_PREFIX}`)" if t["manual_steps"] else "") + "\n"
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
