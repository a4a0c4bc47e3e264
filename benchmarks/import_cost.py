"""What ``import compat`` adds to interpreter start-up: median wall time of N fresh processes, side by side.

    .venv/bin/python benchmarks/import_cost.py [-n 30]

Statements timed in the same run, interleaved round by round so machine load hits every column alike:

* ``pass``: a bare interpreter (the baseline);
* ``import packaging.version, packaging.specifiers``: the one dependency compat imports;
* ``import importlib.metadata``: what a check through the standard library would pay before reading anything;
* ``import compat``: the whole check (metadata scan of every floor + verdicts);
* ``import compat`` with ``TRL_COMPAT_CHECK=off``: the package without the check.

Children run with bytecode writing allowed (``PYTHONDONTWRITEBYTECODE`` removed) after one warm-up round, so the
figures are the steady state a user sees, not first-run compilation. The target is < 30 ms added over ``pass``.
This is a benchmark, not a test: it prints figures and asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

CASES: list[tuple[str, str, dict[str, str]]] = [
    ("pass", "pass", {}),
    ("packaging", "import packaging.version, packaging.specifiers", {}),
    ("importlib.metadata", "import importlib.metadata", {}),
    ("import compat", "import compat", {}),
    ("import compat (check off)", "import compat", {"TRL_COMPAT_CHECK": "off"}),
]


def _time_once(python: str, code: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([python, "-c", code], env=env, check=True)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=30, help="fresh processes per statement (default 30)")
    parser.add_argument("--python", default=sys.executable, help="interpreter to time (default: this one)")
    args = parser.parse_args(argv)

    base_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "TRL_COMPAT_CHECK")}
    envs = [{**base_env, **extra} for _, _, extra in CASES]
    for (_, code, _), env in zip(CASES, envs):  # warm-up: write .pyc files, fill the OS file cache
        _time_once(args.python, code, env)
    samples: list[list[float]] = [[] for _ in CASES]
    for _ in range(args.n):
        for i, ((_, code, _), env) in enumerate(zip(CASES, envs)):
            samples[i].append(_time_once(args.python, code, env))

    medians = [statistics.median(s) * 1000 for s in samples]
    baseline = medians[0]
    print(f"median of {args.n} fresh processes each ({args.python}); load average {os.getloadavg()[0]:.2f}")
    print(f"{'statement':<28}{'median ms':>10}{'added ms':>10}{'ratio':>8}")
    for (label, _, _), median in zip(CASES, medians):
        print(f"{label:<28}{median:>10.1f}{median - baseline:>10.1f}{median / baseline:>8.2f}")
    added = medians[3] - baseline
    print(f"\nimport compat adds {added:.1f} ms over a bare interpreter (target < 30 ms).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
