"""`python -m compat.demo` (what `make demo` runs): the whole story on a bundled PPO-era repository.

The default is `examples/ppo_era_repo/`, a TRL 0.8-era project (PPO, SFT, DPO, ORPO and reward scripts sharing a
`utils.py`, requirements pinning trl 0.8.6); `--examples examples/ppo_era` runs the six single-file PPO scripts.

1. copy the repository to a temp dir and make it a git repository (so the migrator's dirty-tree guard is happy);
2. `python -m compat.migrate --diff` on it and print the diff;
3. `python -m compat.migrate --report FILE` in place and print the summary, the report and the TODO list;
4. `python -m compat.check` on the result: what the target TRL's API still rejects, and the markers left;
5. smoke-run every script that trains (`compat.smoke.run`: 2 training steps on CPU with tiny stand-ins for every
   model, tokenizer, dataset and pipeline, offline) and print the results with their failure class.

Exit status 0 when every script trained, or stopped only at a line the migration marked (a decision it leaves to a
human: the ledger is complete); 1 when a script fails anywhere else. If the migrator is not importable, the demo says
so and shows what the smoke runner reports for an un-migrated original instead (exit status 1).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from compat.smoke import SmokeResult, run

# The bundled repository lives in the source tree (not in the wheel): next to the package, else under the cwd.
EXAMPLES = next((p for p in (Path(__file__).resolve().parent.parent / "examples" / "ppo_era_repo",
                             Path.cwd() / "examples" / "ppo_era_repo") if p.is_dir()),
                Path(__file__).resolve().parent.parent / "examples" / "ppo_era_repo")
TRAINS_RE = re.compile(r"\.train\(")  # a script that trains (after migration every one calls `trainer.train()`)


def _rule(title: str) -> None:
    print(f"\n{'=' * 8} {title} {'=' * max(0, 100 - len(title))}", flush=True)


def _git_init(repo: Path) -> bool:
    if shutil.which("git") is None:
        return False
    ident = ["-c", "user.name=trl-compat demo", "-c", "user.email=demo@trl-compat.invalid", "-c", "commit.gpgsign=false"]
    for cmd in (["init", "-q"], ["add", "-A"], [*ident, "commit", "-q", "-m", "PPO-era code"]):
        if subprocess.run(["git", *cmd], cwd=repo, capture_output=True).returncode != 0:
            return False
    return True


def _migrator_available() -> str | None:
    """None when `python -m compat.migrate` can run here, else why not."""
    try:
        if importlib.util.find_spec("compat.migrate.__main__") is None:
            return "compat.migrate has no __main__ yet"
    except ImportError as exc:
        return f"compat.migrate cannot be imported ({exc})"
    return None


def _todos(repo: Path) -> list[str]:
    out = []
    for path in sorted(repo.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "TODO(trl-compat)" in line:
                out.append(f"{path.relative_to(repo)}:{number}: {line.split('TODO(trl-compat)', 1)[1].lstrip(': ')}")
    return out


def _trl_version() -> str | None:
    try:
        return version("trl")
    except PackageNotFoundError:
        return None


def _smoke_all(scripts: list[Path], cwd: Path, jobs: int, timeout: float) -> list[SmokeResult]:
    def one(path: Path) -> SmokeResult:
        print(f"  smoke-running {path.name} ...", flush=True)
        return run(path, cwd=cwd, timeout=timeout)

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, scripts))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m compat.demo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--to", choices=("grpo", "online-dpo"), default="grpo", help="what PPO code becomes")
    parser.add_argument("--scripts", default="", help="comma-separated script names to smoke-run (default: all)")
    parser.add_argument("--jobs", type=int, default=2, help="smoke runs in parallel (2)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per smoke run (600)")
    parser.add_argument("--no-smoke", action="store_true", help="migrate and report only")
    parser.add_argument("--keep", metavar="DIR", help="work in DIR (kept) instead of a temp dir")
    parser.add_argument("--examples", metavar="DIR", type=Path, default=EXAMPLES,
                        help=f"the PPO-era repository to migrate (default: {EXAMPLES})")
    opts = parser.parse_args(argv)
    if not opts.examples.is_dir():
        print(f"trl-compat demo: no example repository at {opts.examples} (it ships in the source tree, "
              "examples/ppo_era/; pass --examples DIR)", file=sys.stderr)
        return 2

    work = Path(opts.keep).resolve() if opts.keep else Path(tempfile.mkdtemp(prefix="trl-compat-demo-"))
    repo = work / opts.examples.resolve().name
    if repo.exists():
        shutil.rmtree(repo)
    shutil.copytree(opts.examples, repo)
    in_git = _git_init(repo)
    print(f"trl-compat demo: PPO-era example repository {opts.examples.name} copied to {repo}"
          f"{' (git repository)' if in_git else ' (no git: --allow-dirty)'}; installed trl {_trl_version()}")
    try:
        return _demo(opts, repo, in_git)
    finally:
        if not opts.keep:
            shutil.rmtree(work, ignore_errors=True)


def _demo(opts: argparse.Namespace, repo: Path, in_git: bool) -> int:
    missing = _migrator_available()
    if missing:
        _rule("migrator not available")
        print(f"The migrator is not available in this checkout yet: {missing}.\n"
              "Without it the demo can only show what the smoke runner says about an un-migrated PPO-era script:")
        original = next((p for p in sorted(repo.glob("*.py")) if "PPOTrainer" in p.read_text(encoding="utf-8")),
                        next(iter(sorted(repo.glob("*.py")))))
        result = run(original, cwd=repo, timeout=opts.timeout)
        print(result.format())
        return 1

    trl = _trl_version()
    base = [sys.executable, "-m", "compat.migrate", "--to", opts.to]
    if trl:
        base += ["--target-trl", trl]
    if not in_git:  # a plain copy of the bundled repository: nothing to guard, nothing git could restore
        base += ["--allow-dirty", "--allow-no-vcs"]

    _rule(f"1. python -m compat.migrate --diff {repo.name}/  (nothing written)")
    diff = subprocess.run([*base, "--diff", "-q", str(repo)], capture_output=True, text=True, cwd=repo.parent)
    print(diff.stdout.replace(str(repo) + os.sep, "") or "(no changes)")
    if diff.returncode not in (0, 1):
        print(diff.stderr)
        return 2

    _rule(f"2. python -m compat.migrate --report report.json {repo.name}/  (in place)")
    report_path = repo.parent / "report.json"
    started = time.monotonic()
    done = subprocess.run([*base, "--report", str(report_path), str(repo)], capture_output=True, text=True,
                          cwd=repo.parent)
    summary = (done.stdout + done.stderr).replace(str(repo) + os.sep, "")
    print(summary.rstrip() or "(no output)")
    print(f"(migration took {time.monotonic() - started:.1f} s, exit status {done.returncode})")
    if done.returncode != 0:
        return 2
    try:
        report = json.loads(report_path.read_text(encoding="utf-8"))
        print(f"report.json ({report.get('schema')}): target TRL {report.get('target_trl')}; "
              f"totals {json.dumps(report.get('totals'))}")
        for entry in report.get("files", []):
            findings = entry.get("findings", [])
            print(f"  {Path(entry.get('path', '?')).name}: {entry.get('status')}, rules {entry.get('rules_applied')}, "
                  f"{len(findings)} finding(s)")
    except (OSError, ValueError) as exc:
        print(f"(report not readable: {exc})")

    todos = _todos(repo)
    _rule(f"3. what a human must decide: {len(todos)} TODO(trl-compat) marker(s)")
    for line in todos:
        print(f"  {line}")

    _rule(f"4. python -m compat.check {repo.name}/  (the target TRL's API, statically, and the markers left)")
    check = subprocess.run([sys.executable, "-m", "compat.check", "--accept-markers", str(repo)], capture_output=True,
                           text=True, cwd=repo.parent)
    problems = [ln for ln in check.stdout.splitlines() if ln and not ln.startswith(" ") and ": marker: " not in ln
                and not ln.startswith("target TRL")]
    print("\n".join(problems).replace(str(repo) + os.sep, "") or "(no API problem)")
    print((check.stdout.strip().splitlines() or ["(no summary)"])[-1].replace(str(repo) + os.sep, ""))

    if opts.no_smoke:
        return 0
    wanted = {s.strip() for s in opts.scripts.split(",") if s.strip()}
    scripts = [p for p in sorted(repo.glob("*.py"))
               if TRAINS_RE.search(p.read_text(encoding="utf-8")) and (not wanted or p.name in wanted)]
    _rule(f"5. python -m compat.smoke on the {len(scripts)} migrated script(s): 2 training steps each, CPU, offline")
    results = _smoke_all(scripts, repo, opts.jobs, opts.timeout)
    for result in results:
        print(result.format().replace(str(repo) + os.sep, ""))

    _rule("summary")
    width = max((len(p.name) for p in scripts), default=10)
    print(f"  {'script':<{width}}  {'TODOs':>5}  {'smoke':<7} {'steps':>5} {'seconds':>8}  {'trainer / class':<20} stops at")
    for path, result in zip(scripts, results):
        n_todo = sum(1 for t in todos if t.startswith(path.name + ":"))
        what = ", ".join(result.trainers) if result.passed else (result.failure_class or "-")
        where = "" if result.passed else f"{Path(result.file).name}:{result.line}" if result.file else "?"
        print(f"  {path.name:<{width}}  {n_todo:>5}  {result.status:<7} {result.steps:>5} {result.duration_s:>8.1f}  "
              f"{what:<20} {where}")
    passed = [r for r in results if r.passed]
    at_marker = [r for r in results if not r.passed and _stops_at_marker(r)]
    print(f"\n{len(passed)}/{len(results)} migrated scripts trained for 2 steps with trl {trl}, untouched after "
          f"migration; {len(at_marker)} stop at a line the migration marked (a decision left to you, see the TODOs); "
          f"{len(results) - len(passed) - len(at_marker)} fail elsewhere.")
    return 0 if len(passed) + len(at_marker) == len(results) else 1


def _stops_at_marker(result: SmokeResult) -> bool:
    """A failure at (or just below) a TODO(trl-compat) marker: a step the migration left to a human, not a bug."""
    return result.failure_class == "migration-leftover" and (result.hint or "").startswith(
        "migration leftover: the TODO(trl-compat) marker")


if __name__ == "__main__":
    sys.exit(main())
