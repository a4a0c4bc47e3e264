"""Benchmark (not a test): the migrator's CPU seconds and peak memory per MB of *candidate* source.

    .venv/bin/python benchmarks/migrate_cost_per_mb.py                       # this checkout only
    .venv/bin/python benchmarks/migrate_cost_per_mb.py --before /path/to/old/checkout   # side by side

A scratch tree gets `--files` PPO-era files (the varied forms of `benchmarks/migrate_repo.py`: classic `step()` PPO,
PPOv2, value heads, aliases, notebooks, deprecated options, each with some ordinary filler code), every one of them a
candidate (it passes the prefilter and is parsed). Each checkout runs `python -m compat.migrate --check -j 1` over a
fresh copy of that tree as a subprocess, as a user runs it; CPU is the child's user + sys time (`os.wait4`), peak
memory its maximum resident set size, both divided by the MB of candidate source. Interpreter start-up is measured
separately (`--list`) and subtracted from the CPU figure, so the ratio is the per-MB cost of the work itself.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def _corpus_writer():
    spec = importlib.util.spec_from_file_location("_migrate_repo_bench", HERE / "migrate_repo.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module.write_ppo_files


def _run(checkout: Path, args: list[str], cwd: Path) -> tuple[float, float, int]:
    """(cpu seconds, peak RSS in MB, exit code) of one `python -m compat.migrate ARGS` child."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    proc = subprocess.Popen([sys.executable, "-m", "compat.migrate", *args], cwd=cwd, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="another checkout of trl-compat to measure side by side")
    parser.add_argument("--files", type=int, default=150, help="candidate files in the scratch tree (default 150)")
    args = parser.parse_args()
    checkouts = ([("before", args.before.resolve())] if args.before else []) + [("this", REPO)]
    with tempfile.TemporaryDirectory() as scratch:
        tree = Path(scratch) / "tree"
        _corpus_writer()(tree, args.files)
        mb = sum(p.stat().st_size for p in tree.rglob("*") if p.is_file()) / 1e6
        print(f"candidate source: {args.files} files, {mb:.3f} MB")
        rows = []
        for label, checkout in checkouts:
            base_cpu, base_rss, _ = _run(checkout, ["--list"], Path(scratch))
            copy = Path(scratch) / f"copy-{label}"
            shutil.copytree(tree, copy)
            cpu, rss, code = _run(checkout, ["--check", "-q", "-j", "1", str(copy)], Path(scratch))
            if code not in (0, 1):
                print(f"{label}: the migrator exited {code} (a file failed)", file=sys.stderr)
            per_cpu, per_rss = (cpu - base_cpu) / mb, (rss - base_rss) / mb
            rows.append((label, per_cpu, per_rss))
            print(f"{label:>6} ({checkout}): {cpu:6.2f} CPU-s total, {per_cpu:6.2f} CPU-s/MB (start-up "
                  f"{base_cpu:.2f} s subtracted); peak RSS {rss:6.0f} MB, {per_rss:6.0f} MB/MB above start-up")
        if len(rows) == 2:
            (_, c0, r0), (_, c1, r1) = rows
            print(f"after/before: CPU per MB x{c1 / c0:.2f}, peak RSS per MB x{r1 / max(r0, 1e-9):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
