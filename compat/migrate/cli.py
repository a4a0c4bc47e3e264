"""`python -m compat.migrate PATH...` (also `trl-compat migrate`): the command line over `migrate_paths`.

Output contract: diffs (`--diff`) and the list of files that would change (`--check`) go to stdout, so they can be
piped (`python -m compat.migrate --diff . | git apply`); everything for humans (what was rewritten, manual steps,
errors, the summary, the progress bar) goes to stderr. Exit codes: 0 nothing to do or all written, 1 changes needed
(`--check`/`--diff`), 2 a file failed, the dirty-tree guard or the no-VCS guard refused, or bad usage.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from collections.abc import Sequence
from typing import TextIO

from packaging.version import InvalidVersion, Version

from migrations import all_migrations, select
from migrations.base import GUIDE, TODO_PREFIX, Options

from . import gitguard
from .ledger import Step
from .ledger import build as build_ledger
from .report import dumps, fix_safety
from .interrupts import Interrupted, handle_signals
from .runner import MAX_FILE_BYTES, TIME_BUDGET_S, FileEntry, Report, migrate_paths
from .target import UnsupportedTargetError, check_target, detect_target
from .walk import exclude_pattern


class _UsageError(Exception):
    pass


def _ids(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog or "python -m compat.migrate",
        description="Rewrite a repository's code for a newer TRL, in place, safely; mark what needs a human with "
        f"`{TODO_PREFIX} ... [rule-id]` (`trl-compat explain RULE`; the report links {GUIDE}).",
        epilog="exit codes: 0 nothing to do or all written; 1 changes needed (--check/--diff), or --check with "
        "`# TODO(trl-compat):` markers left (see --accept-markers); 2 a file failed, the dirty-tree or no-VCS guard refused, "
        "or bad usage.",
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
    parser.add_argument("--target-transformers", metavar="4|5|VERSION",
                        help="the transformers to migrate to: a major (newest of it the target TRL allows) or a "
                        "release (default: the repo's transformers pin when the target TRL allows it, else the newest "
                        "release it allows)")
    parser.add_argument("--target-peft", metavar="VERSION", help="the peft to migrate to (default: chosen the same way)")
    parser.add_argument("--target-accelerate", metavar="VERSION",
                        help="the accelerate to migrate to (default: chosen the same way)")
    parser.add_argument("--to", choices=("grpo", "online-dpo"), default="grpo",
                        help="what PPO code becomes (default: grpo)")
    parser.add_argument("--exclude", action="append", default=[], metavar="GLOB", type=exclude_pattern,
                        help="gitignore-style pattern to skip (repeatable)")
    parser.add_argument("--allow-dirty", action="store_true", help="write files that have uncommitted changes")
    parser.add_argument("--allow-no-vcs", action="store_true",
                        help="write into a folder that is not inside a git or Mercurial work tree (refused by default: "
                        "nothing could show or undo the changes; --diff and --check never need it)")
    parser.add_argument("-j", "--jobs", type=int, metavar="N",
                        help="worker processes (default: as many as pay off for the number of candidate files)")
    unsafe = parser.add_mutually_exclusive_group()
    unsafe.add_argument("--unsafe-fixes", dest="unsafe_fixes", action="store_true", default=True,
                        help="apply unsafe rules too (the default: see 'Fix safety' in docs/migrate.md)")
    unsafe.add_argument("--no-unsafe-fixes", dest="unsafe_fixes", action="store_false",
                        help="apply only safe rules (behaviour-preserving); unsafe ones are listed, not run")
    parser.add_argument("-q", "--quiet", action="store_true", help="print only errors (and --diff/--check output)")
    parser.add_argument("--max-file-size", type=float, default=MAX_FILE_BYTES / 1e6, metavar="MB",
                        help="skip (and name) files larger than this (default: %(default)g MB; a notebook, "
                             "mostly outputs, may be 8 times that)")
    parser.add_argument("--time-budget", type=float, default=TIME_BUDGET_S, metavar="SECONDS",
                        help="give up (and name) a file that takes longer than this (default: %(default)g s)")
    parser.add_argument("--force-read-only", action="store_true", help="rewrite read-only files too")
    parser.add_argument("--report", metavar="FILE", help="write a machine-readable report to FILE ('-' = stdout)")
    parser.add_argument("--format", choices=("json", "sarif"), default="json", help="report format (default: json)")
    parser.add_argument("--accept-markers", action="store_true",
                        help="--check: do not fail on `# TODO(trl-compat):` markers left in the files (still listed)")
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
    """Run the migrator with command-line arguments; returns the exit code.

    Ctrl-C or SIGTERM: the run stops at once (the write in flight finishes or rolls back), what was written is listed,
    and the exit code is 130 / 143; a second signal exits immediately. A closed stdout (`--diff . | head`) ends the
    run quietly (exit 141, as a shell reports SIGPIPE).
    """
    with handle_signals():
        try:
            return _main(argv, prog)
        except Interrupted as exc:
            return _interrupted(exc)
        except BrokenPipeError:
            with contextlib.suppress(OSError):  # no second error when Python flushes stdout at exit
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
            return 141


def _interrupted(exc: Interrupted) -> int:
    err = sys.stderr
    name = signal.Signals(exc.signum).name
    report = exc.report
    if isinstance(report, Report):
        written = [f.path for f in report.files if f.written]
        err.write(f"interrupted ({name}): {len(written)} file(s) were rewritten before the stop, every other file is "
                  "untouched\n")
        for path in written:
            err.write(f"  rewrote {shown(path)}\n")
    else:
        err.write(f"interrupted ({name}): nothing was written\n")
    return exc.exit_code


def shown(path: str) -> str:
    """A path as text whatever its bytes: undecodable bytes as \\xNN escapes."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _main(argv: Sequence[str] | None, prog: str | None) -> int:
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
        rules, options, target_note, stack_note = _choose(args, paths)
    except _UsageError as exc:
        err.write(f"error: {exc}\n")
        return 2
    if args.jobs is not None and args.jobs < 1:
        err.write("error: -j/--jobs must be at least 1\n")
        return 2

    mode = "diff" if args.diff else "check" if args.check else "write"
    if mode == "write" and not args.allow_no_vcs:
        outside = [p for p in paths if os.path.exists(p) and gitguard.vcs_root(p) is None]
        if outside:
            err.write(_no_vcs_message(outside))
            return 2
    if not args.quiet:
        err.write(f"target TRL {options.target_trl} ({target_note}); {len(rules)} migration(s)\n")
        err.write(f"target stack: {stack_note}\n")
    progress = _Progress(enabled=err.isatty() and not args.quiet)
    try:
        report = migrate_paths(paths, options=options, rules=rules, mode=mode, exclude=args.exclude,
                               jobs=args.jobs, allow_dirty=args.allow_dirty, on_start=progress.start,
                               on_file=progress.advance, max_file_bytes=int(args.max_file_size * 1e6),
                               time_budget=args.time_budget, force_read_only=args.force_read_only)
    finally:
        progress.stop()
    steps = build_ledger(report)  # the markers left, at their lines in the files as they are now
    _print(report, args.quiet, out, err, steps)
    if args.report:
        text = dumps(report, args.format, steps)
        if args.report == "-":
            out.write(text.encode("utf-8", "backslashreplace").decode("utf-8"))
        else:
            with open(args.report, "w", encoding="utf-8", errors="backslashreplace") as fh:  # undecodable name bytes: JSON \udcNN escapes
                fh.write(text)
    if report.exit_code == 0 and report.mode == "check" and steps and not args.accept_markers:
        return 1  # manual steps left: CI and the pre-commit hook stay red until they are done or accepted
    return report.exit_code


def _no_vcs_message(outside: list[str]) -> str:
    """What the no-VCS guard says: what it found, why it refuses, what to run."""
    names = "".join(f"  {shown(p)}\n" for p in outside)
    return (
        f"refused to write: {len(outside)} path(s) are not inside a git or Mercurial work tree, so nothing could "
        f"show or undo the rewrite; nothing was written:\n{names}"
        "put the code under version control first (git init && git add -A && git commit -m 'before trl-compat'), "
        "preview with --diff or --check (they never write), or pass --allow-no-vcs to write anyway\n"
    )


def _choose(args: argparse.Namespace, paths: list[str]) -> tuple[tuple, Options, str, str]:
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
        try:
            check_target(target)
        except UnsupportedTargetError as exc:
            raise _UsageError(f"--target-trl: {exc}") from None
        note = "from --target-trl"
    else:
        choice = detect_target(paths)
        target, note = choice.version, choice.source
    from .target import LIBRARIES, TargetError, detect_library_target, project_uses_trl, project_uses_trl_vllm

    targets, stack = [], []
    uses_trl = project_uses_trl(paths, args.exclude)
    for library in LIBRARIES:
        if not uses_trl and not getattr(args, f"target_{library}", None):
            continue  # a tree without TRL: only a library the user names explicitly
        try:
            choice = detect_library_target(paths, library, target, getattr(args, f"target_{library}", None))
        except TargetError as exc:
            raise _UsageError(str(exc)) from None
        targets.append((library, choice.version))
        stack.append(f"{library} {choice.version} ({choice.source})")
    if not uses_trl:
        stack.append("nothing here imports or requires trl, so the transformers/peft/accelerate rules not named by "
                     "--target-<library> and the launcher config rule leave it alone")
    options = Options(target_trl=target, to=args.to, targets=tuple(targets), uses_trl=uses_trl,
                      uses_trl_vllm=uses_trl and project_uses_trl_vllm(paths, args.exclude))
    rules = select(options, args.only, args.skip)
    if not args.unsafe_fixes:
        held = [m.id for m in rules if m.fix_safety != "safe"]
        rules = tuple(m for m in rules if m.fix_safety == "safe")
        if held:
            note += f"; --no-unsafe-fixes: not running unsafe {', '.join(held)}"
    return rules, options, note, "; ".join(stack)


def _safety_line(rules_applied: Sequence[str]) -> str:
    """`unsafe [ppo-to-grpo, value-head-models], safe [deprecated-import-paths]` for one changed file."""
    parts = []
    for cls in ("unsafe", "safe"):
        ids = [r for r in rules_applied if fix_safety(r) == cls]
        if ids:
            parts.append(f"{cls} [{', '.join(ids)}]")
    return ", ".join(parts)


def _print(report: Report, quiet: bool, out: TextIO, err: TextIO, steps: list[Step]) -> None:
    by_path: dict[str, list[Step]] = {}
    for step in steps:
        by_path.setdefault(step.path, []).append(step)
    for entry in report.files:
        path = shown(entry.path)
        if entry.status == "changed":
            if report.mode == "diff" and entry.diff:
                out.flush()
                out.buffer.write(entry.diff) if hasattr(out, "buffer") else out.write(entry.diff.decode("utf-8", "replace"))
            elif report.mode == "check":
                out.write(f"would rewrite {path}\n")
            elif entry.written and not quiet:
                err.write(f"rewrote {path}\n")
            if not quiet and entry.rules_applied:
                err.write(f"{path}: fixes: {_safety_line(entry.rules_applied)}\n")
        for e in entry.errors:
            err.write(f"{path}: error: {e}\n")
        if not quiet:
            for f in entry.findings:
                if f.severity in ("info", "manual"):  # manual steps: from the ledger below
                    continue
                where = f"{path}:{f.line}:{f.column}" if f.cell is None else f"{path}:cell {f.cell}:{f.line}"
                guide = f" (see {GUIDE}#{f.anchor})" if f.anchor else ""
                err.write(f"{where}: {f.severity}: [{f.rule}] {f.message}{guide}\n")
            for step in by_path.get(entry.path, ()):
                err.write(step.text() + "\n")
    out.flush()
    if report.refused_dirty:
        err.write(
            f"refused to write: {len(report.refused_dirty)} file(s) have uncommitted changes and nothing was written:\n"
        )
        for name, state in report.refused_dirty.items():
            err.write(f"  {shown(name)} ({state})\n")
        err.write("commit or stash them first (so the migration can be reviewed and undone), or pass --allow-dirty\n")
    if quiet:
        return
    t = report.totals
    # a refused write wrote nothing: never call its files changed
    verb = "would change" if report.mode != "write" else "would change (nothing written)" if report.refused_dirty \
        else "changed"
    err.write(
        f"{t['scanned']} file(s) scanned ({t['parsed']} parsed): {t['changed']} {verb}, {t['unchanged']} "
        f"unchanged, {t['failed']} failed; {len(steps)} manual step(s) left"
        + (f" (marked `{TODO_PREFIX}`)" if steps else "") + "\n"
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
