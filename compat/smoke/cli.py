"""Command line of the smoke runner: `python -m compat.smoke` and `trl-compat smoke` (which calls `main(argv)`).

    python -m compat.smoke train.py [--json] [--timeout 300] [--steps 2] [--python PATH] [-- --script-arg value ...]

Exit status 0 when the script completed training steps, 1 when it did not, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import sys

from compat.smoke.runner import run


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog or "python -m compat.smoke",
        description="Run a training script for 2 steps on CPU with tiny stand-ins for every model, tokenizer, "
                    "dataset and pipeline it loads; offline. Arguments after `--` go to the script.")
    parser.add_argument("script", help="the training script to run (as `python script.py`)")
    parser.add_argument("script_args", nargs="*", help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help="print the result as JSON (no live output)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds before the run is killed (300)")
    parser.add_argument("--steps", type=int, default=2, help="optimizer steps every Trainer is capped to (2)")
    parser.add_argument("--min-steps", type=int, default=1,
                        help="completed steps needed to pass (1; 0 accepts a script that never trains)")
    parser.add_argument("-q", "--quiet", action="store_true", help="do not stream the script's output")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every notice and the traceback")
    parser.add_argument("--keep-tmp", action="store_true", help="keep the temp dir (outputs, state) for inspection")
    parser.add_argument("--python", metavar="PATH",
                        help="run the script under this interpreter (the repository's environment; it needs the "
                             "script's dependencies, not trl-compat). Default: the active virtualenv's, else this one")
    parser.add_argument("--learn", type=int, default=0, metavar="N",
                        help="GRPO/RLOO/Online DPO: train N steps (e.g. 40) on a task with a known optimum, keeping "
                             "your algorithm settings, and fail unless reward rose (see -v for what it proves)")
    return parser


def main(argv: list[str] | None = None, *, prog: str | None = None) -> int:
    """Run the smoke runner with command-line arguments; returns the exit status (0 passed, 1 failed, 2 usage)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    script_args: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, script_args = argv[:cut], argv[cut + 1:]
    parser = build_parser(prog)
    try:
        opts = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0) and 2
    result = run(opts.script, [*opts.script_args, *script_args], timeout=opts.timeout, max_steps=opts.steps,
                 min_steps=opts.min_steps, echo=not (opts.json or opts.quiet), keep_tmp=opts.keep_tmp,
                 python=opts.python, learn=opts.learn)
    if opts.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print(result.format(verbose=opts.verbose))
    return 0 if result.passed and result.learned is not False else 1
