"""`trl-compat check PATH...` (also `python -m compat.check`): the static API check and the marker ledger for CI.

Text output (stdout): one line per problem, `path:line:col: code: message`, then one per marker left,
`path:line:col: marker: [rule] message`, then a summary; `--format json` prints the report (schema in
docs/migrate.md) instead, `--report FILE` writes it as well. Exit codes: 0 clean; 1 problems or markers left;
2 bad usage or a file that cannot be read or parsed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TextIO

from . import CheckReport, check_paths, choose_target


def _exclude(value: str) -> str:
    """`--exclude`: a pattern the walk can use (`compat.migrate.walk.exclude_pattern`, imported when one is given)."""
    from compat.migrate.walk import exclude_pattern

    return exclude_pattern(value)


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog or "python -m compat.check",
        description="Check that code only uses what the target TRL, transformers, peft and accelerate have "
        "(imports, attributes, call keywords and positionals; from the API atlas, none of them needed) and list "
        "the `# TODO(trl-compat):` markers left.",
        epilog="exit codes: 0 clean; 1 problems or markers left; 2 bad usage, or a file cannot be read or parsed.",
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: .)")
    parser.add_argument("--target-trl", metavar="VERSION",
                        help="any TRL release 0.4.0 .. 1.16.0, or `pinned`: the newest the repo's own trl pins "
                             "allow, old ones included (default: the migration target `compat.migrate` picks from "
                             "the pins, else the newest)")
    parser.add_argument("--target-transformers", metavar="4|5|VERSION",
                        help="the transformers to check transformers imports and calls (and the fields TRL configs "
                             "inherit) against: a major (its newest release the target TRL allows) or a release "
                             "(default: chosen as `compat.migrate` chooses it; for a TRL < 1.13, the release of "
                             "its era)")
    parser.add_argument("--target-peft", metavar="VERSION", help="the peft to check against (default: likewise)")
    parser.add_argument("--target-accelerate", metavar="VERSION",
                        help="the accelerate to check against (default: likewise)")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="stdout format (default: text)")
    parser.add_argument("--report", metavar="FILE", help="also write the JSON report to FILE")
    parser.add_argument("--exclude", action="append", default=[], metavar="GLOB", type=_exclude,
                        help="gitignore-style pattern to skip (repeatable)")
    parser.add_argument("--accept-markers", action="store_true",
                        help="list markers but do not fail on them (exit 1 only for API problems)")
    return parser


def print_text(report: CheckReport, out: TextIO) -> None:
    for f in report.files:
        for p in f.problems:
            where = f"{f.path}:{p.line}:{p.column}" if p.cell is None else f"{f.path}:cell {p.cell}:{p.line}:{p.column}"
            since = f" [since {p.since}]" if p.since else ""
            out.write(f"{where}: {p.code}: {p.message}{since}\n")
        for e in f.errors:
            out.write(f"{f.path}: error: {e}\n")
    for f in report.files:
        for m in f.markers:
            where = f"{f.path}:{m.line}:{m.column}" if m.cell is None else f"{f.path}:cell {m.cell}:{m.line}:{m.column}"
            out.write(f"{where}: marker: {m.message}\n")
    s = report.summary()
    t = report.target
    out.write(f"target TRL {t.trl}, transformers {t.transformers}, peft {t.peft}, accelerate {t.accelerate} "
              f"({t.source}); {s['scanned']} file(s) scanned, {s['checked']} checked: "
              f"{s['problems']} problem(s) in {s['files_with_problems']} file(s), {s['markers']} marker(s) left "
              f"(`# TODO(trl-compat):`) in {s['files_with_markers']} file(s)"
              + (f", {s['errors']} file error(s)" if s["errors"] else "")
              + (f", {s['own_trl']} file(s) importing the repository's own copy of trl (its names not checked "
                 "against TRL)" if s["own_trl"] else "") + f"; {s['seconds']:.2f} s\n")


def main(argv: Sequence[str] | None = None, *, prog: str | None = None) -> int:
    """Run the check with command-line arguments; returns the exit code."""
    parser = build_parser(prog)
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:  # --help (0) or bad usage (2)
        return int(exc.code or 0)
    from migrations.atlas import AtlasError

    paths = args.paths or ["."]
    try:
        target = choose_target(paths, args.target_trl, args.target_transformers, args.target_peft,
                               args.target_accelerate)
    except AtlasError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    report = check_paths(paths, target, exclude=args.exclude)
    out = sys.stdout
    try:
        if args.format == "json":
            out.write(json.dumps(report.to_json(), indent=2) + "\n")
        else:
            print_text(report, out)
        out.flush()
    except BrokenPipeError:  # `... | head`
        sys.stderr.close()
    if args.report:
        try:
            with open(args.report, "w", encoding="utf-8") as fh:
                json.dump(report.to_json(), fh, indent=2)
                fh.write("\n")
        except OSError as exc:
            sys.stderr.write(f"error: cannot write the report to {args.report}: {exc.strerror or exc}\n")
            return 2
    code = report.exit_code
    if code == 1 and args.accept_markers and not report.problems:
        return 0
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
