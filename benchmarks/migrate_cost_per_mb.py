"""Benchmark (not a test): the migrator's CPU seconds and peak memory per MB of *candidate* source.

    .venv/bin/python benchmarks/migrate_cost_per_mb.py                       # this checkout only
    .venv/bin/python benchmarks/migrate_cost_per_mb.py --before /path/to/old/checkout   # side by side
    .venv/bin/python benchmarks/migrate_cost_per_mb.py --baseline main --files 60      # a git ref, side by side

A scratch tree gets `--files` PPO-era files (the varied forms of `benchmarks/migrate_repo.py`: classic `step()` PPO,
PPOv2, value heads, aliases, notebooks, deprecated options, each with some ordinary filler code), every one of them a
candidate (it passes the prefilter and is parsed). Each checkout runs `python -m compat.migrate -q -j 1 --allow-dirty
--allow-no-vcs` over a fresh copy of that tree (a plain folder, no git) as a subprocess, as a user runs it; CPU is the
child's user + sys time (`os.wait4`), peak memory its maximum resident set size, both divided by the MB of candidate
source; a migrator that exits 2 (refused, or a file failed) fails the benchmark. Interpreter start-up is measured
separately (`--list`) and subtracted from the CPU figure, so the ratio is the per-MB cost of the work itself.
`--baseline REF` exports that commit of this repository (`git archive`, nothing checked out or changed here) into the
scratch folder and measures it the same way, in the same run; `--repeat N` alternates the checkouts N times and keeps
each one's lowest CPU (the machine is shared: the minimum is the least disturbed run). The migrated copies of the two
checkouts are compared byte for byte: any difference is printed and the script exits 1, so a speed-up that changed an
output cannot pass unnoticed.
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


def _export(ref: str, dest: Path) -> Path:
    """The tree of commit `ref` of this repository, written to `dest` with `git archive` (no worktree, no checkout)."""
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", ref], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    return dest


def _tree_texts(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


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
    parser.add_argument("--baseline", metavar="REF", help="a git ref of this repository to measure side by side")
    parser.add_argument("--files", type=int, default=150, help="candidate files in the scratch tree (default 150)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per checkout, alternating; lowest CPU kept")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        before = args.before.resolve() if args.before else None
        if args.baseline:
            before = _export(args.baseline, Path(scratch) / "baseline")
        label_before = f"before ({args.baseline})" if args.baseline else "before"
        checkouts = ([(label_before, before)] if before else []) + [("this", REPO)]
        tree = Path(scratch) / "tree"
        _corpus_writer()(tree, args.files)
        mb = sum(p.stat().st_size for p in tree.rglob("*") if p.is_file()) / 1e6
        print(f"candidate source: {args.files} files, {mb:.3f} MB")
        best: dict[str, tuple[float, float, float, float]] = {}
        outputs: dict[str, dict[str, bytes]] = {}
        for round_ in range(args.repeat):
            for k, (label, checkout) in enumerate(checkouts):
                base_cpu, base_rss, _ = _run(checkout, ["--list"], Path(scratch))
                copy = Path(scratch) / f"copy-{k}-{round_}"
                shutil.copytree(tree, copy)
                cpu, rss, code = _run(checkout, ["-q", "-j", "1", "--allow-dirty", "--allow-no-vcs", str(copy)],
                                      Path(scratch))
                if code not in (0, 1):  # a refusal (exit 2) would make the figures measure nothing
                    print(f"{label}: the migrator exited {code} (refused, or a file failed)", file=sys.stderr)
                    return 1
                outputs.setdefault(label, _tree_texts(copy))
                shutil.rmtree(copy)
                if label not in best or cpu - base_cpu < best[label][0] - best[label][1]:
                    best[label] = (cpu, base_cpu, rss, base_rss)
        rows = []
        for label, checkout in checkouts:
            cpu, base_cpu, rss, base_rss = best[label]
            per_cpu, per_rss = (cpu - base_cpu) / mb, (rss - base_rss) / mb
            rows.append((label, per_cpu, per_rss))
            print(f"{label:>16}: {cpu:6.2f} CPU-s total, {per_cpu:6.2f} CPU-s/MB (start-up {base_cpu:.2f} s "
                  f"subtracted); peak RSS {rss:6.0f} MB, {per_rss:6.0f} MB/MB above start-up ({checkout})")
        if len(rows) == 2:
            (_, c0, r0), (_, c1, r1) = rows
            print(f"after/before: CPU per MB x{c1 / c0:.2f}, peak RSS per MB x{r1 / max(r0, 1e-9):.2f}")
            o0, o1 = outputs.values()
            differ = sorted(n for n in o0.keys() | o1.keys() if o0.get(n) != o1.get(n))
            print(f"migrated outputs: {len(o0) - len(differ)} of {len(o0)} files identical" +
                  (f"; DIFFERENT: {', '.join(differ[:10])}" if differ else ""))
            if differ:
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
