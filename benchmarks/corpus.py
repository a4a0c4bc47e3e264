"""Benchmark (not a test): the migrator on whole real PPO-era repositories, as a user runs it.

    python benchmarks/corpus.py --mirrors /work/.mirror                  # every entry of benchmarks/corpus.toml
    python benchmarks/corpus.py --mirrors /work/.mirror --only llama-trl --json out.json
    python benchmarks/corpus.py --tree ~/code/my-rlhf-repo               # any local folder (a copy is migrated)
    python benchmarks/corpus.py --mirrors /work/.mirror --smoke          # also smoke-run the documented entry scripts
    python benchmarks/corpus.py --mirrors /work/.mirror --compare benchmarks/results/corpus_baseline.json  # what moved

The corpus is pointers only (`benchmarks/corpus.toml`: repository, commit, era, TRL pin, entry scripts, negative
controls). The trees come from local git mirrors, one per repository, at `MIRRORS/OWNER+NAME/repo` (a bare git dir,
the layout the `fetch` tool writes); nothing is downloaded here.

For each entry this script
  1. materialises the tree at its commit into a temp dir (`git ls-tree` + `git cat-file --batch`: the same bytes as
     `git archive`, but a blob the mirror lacks - stored snapshots leave out some large data files - is skipped and
     counted instead of aborting the extraction), then `git init && git add -A && git commit` so the migrator's
     dirty-tree guard passes;
  2. counts the `.py`/`.ipynb` files that import `trl`, less those whose `trl` is the repository's own copy (a
     `trl/` package beside them or on a folder they put on `sys.path`: the check's `own_trl`, files the migrator
     leaves alone; listed as `own_trl_files`);
  3. runs, BEFORE migrating: the static check (`python -m compat.check . --target-trl V --format json`) on TRL 1.16
     and on 1.13, and `ruff check --select F401,F811,F841`;
  4. migrates as a user does: `python -m compat.migrate . --report r.json` (a subprocess of this interpreter);
  5. reads back what changed (`git status`), the report's failed files and manual steps, and counts the
     `# TODO(trl-compat)` markers in the written files - a disagreement with the report is flagged per file;
  6. runs the static check and ruff again: files passing the check before/after, ruff findings the migration added;
  7. with `--smoke`, smoke-runs each documented entry script (`python -m compat.smoke SCRIPT --json -- ARGS`).
Negative controls must come out with 0 files changed: anything else prints a loud FAIL (and the exit status is 1).

The static check is built separately (`compat/check.py`). When `python -m compat.check` cannot be imported (by the
tree under test, or the folder given with `--check-path`), its columns read "n/a (check unavailable)": no number is
ever invented for it. `ruff` is the real ruff (`pip install ruff`, in the `dev` extra); without it those columns
read n/a too.
"""

from __future__ import annotations

import argparse
import ast
import collections
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(__file__).with_name("corpus.toml")
CHECK_TARGETS = ("1.16.0", "1.13.0")
#: `--stack`: the transformers releases the check of transformers/peft/accelerate code runs against (TRL 1.16).
STACK_TARGETS = ("4.56.2", "5.24.0")
STACK_ROOTS = ("transformers.", "peft.", "accelerate.")
# A file imports transformers or peft when a line starts with `from X[.y] import` or `import X[.y]`.
STACK_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+(?:transformers|peft)(?:\.\w+)*[ \t]+import\b"
                          r"|import[ \t]+(?:transformers|peft)(?:\.\w+)*(?=[ \t,;#]|$))", re.M)
RUFF_RULES = "F401,F811,F841"
MARKER = "TODO(trl-compat)"
NA = "n/a (check unavailable)"

# A file imports trl when a line starts with `from trl[.x] import` or `import trl[.x]` (not `trlx`, not prose).
TRL_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+trl(?:\.\w+)*[ \t]+import\b|import[ \t]+trl(?:\.\w+)*(?=[ \t,;#]|$))",
                        re.M)


class CorpusError(Exception):
    """A corpus entry cannot be run (its mirror or commit is missing, its folder does not exist)."""


# -- materialising a tree ----------------------------------------------------------------------------------------

@dataclasses.dataclass
class Tree:
    root: Path
    files: int
    missing_blobs: list[str]
    skipped: int  # symlinks and submodules


def _git(args: list[str], cwd: Path | None = None, **kw: Any) -> subprocess.CompletedProcess:
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", GIT_CONFIG_NOSYSTEM="1")
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, **kw)


def materialise(git_dir: Path, commit: str, dest: Path, subdir: str = "") -> Tree:
    """Write the tree of `commit` (only `subdir` of it, when given) under `dest`, byte for byte."""
    if not git_dir.is_dir():
        raise CorpusError(f"no mirror at {git_dir}: bring it with the fetch tool (github:OWNER/NAME)")
    spec = [commit, "--", subdir] if subdir else [commit]
    listing = _git(["--git-dir", str(git_dir), "ls-tree", "-r", "-z", "--full-tree", *spec])
    if listing.returncode != 0:
        raise CorpusError(f"{git_dir}: commit {commit} not found ({listing.stderr.decode().strip()})")
    blobs: list[tuple[str, str, str]] = []
    skipped = 0
    for rec in listing.stdout.split(b"\0"):
        if not rec:
            continue
        meta, path = rec.decode("utf-8", "surrogateescape").split("\t", 1)
        mode, kind, sha = meta.split()
        if kind != "blob" or mode == "120000":
            skipped += 1
            continue
        rel = path[len(subdir):].lstrip("/") if subdir else path
        blobs.append((mode, sha, rel))
    if subdir and not blobs:
        raise CorpusError(f"{git_dir}@{commit}: no files under {subdir!r}")
    missing: list[str] = []
    dest.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(["git", "--git-dir", str(git_dir), "cat-file", "--batch"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)
    assert proc.stdin and proc.stdout
    written = 0
    for mode, sha, rel in blobs:
        proc.stdin.write(sha.encode() + b"\n")
        proc.stdin.flush()
        header = proc.stdout.readline().split()
        if len(header) < 3 or header[1] != b"blob":
            missing.append(rel)
            continue
        data = proc.stdout.read(int(header[2]))
        proc.stdout.read(1)  # the newline after the object
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        if mode == "100755":
            target.chmod(0o755)
        written += 1
    proc.stdin.close()
    proc.wait()
    return Tree(dest, written, missing, skipped)


def copy_local(src: Path, dest: Path) -> Tree:
    """A copy of a local folder (its `.git` left out): the benchmark never writes into the folder it was given."""
    if not src.is_dir():
        raise CorpusError(f"{src} is not a folder")
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".git", "__pycache__", ".venv", "*.trl-compat.tmp"),
                    symlinks=True)
    files = sum(1 for p in dest.rglob("*") if p.is_file())
    return Tree(dest, files, [], 0)


def commit_all(root: Path) -> None:
    """`git init && git add -A && git commit`, so the migrator's dirty-tree guard sees a clean tree."""
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=corpus", "-c", "user.email=corpus@localhost", "-c", "commit.gpgsign=false",
                  "commit", "-q", "--no-verify", "-m", "corpus tree"]):
        res = _git(args, cwd=root)
        if res.returncode != 0:
            raise CorpusError(f"git {' '.join(args[:2])} failed in {root}: {res.stderr.decode().strip()}")


# -- looking at a tree -------------------------------------------------------------------------------------------

def source_text(path: Path) -> str:
    """The Python source of a file: a `.py` file as text, a notebook's code cells joined."""
    raw = path.read_bytes().decode("utf-8", "replace")
    if path.suffix != ".ipynb":
        return raw
    try:
        nb = json.loads(raw)
    except ValueError:
        return ""
    cells = nb.get("cells") if isinstance(nb, dict) else None
    out = []
    for cell in cells or []:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            src = cell.get("source", "")
            out.append("".join(src) if isinstance(src, list) else str(src))
    return "\n".join(out)


def code_files(root: Path) -> list[str]:
    out = []
    for p in sorted(root.rglob("*")):
        if ".git" in p.relative_to(root).parts or not p.is_file() or p.suffix not in (".py", ".ipynb"):
            continue
        out.append(p.relative_to(root).as_posix())
    return out


def trl_files(root: Path) -> list[str]:
    return [f for f in code_files(root) if TRL_IMPORT.search(source_text(root / f))]


def changed_files(root: Path) -> list[str]:
    """Files the migrator modified or created (git status against the committed tree)."""
    res = _git(["status", "--porcelain", "-z", "--untracked-files=all"], cwd=root)
    out = []
    for rec in res.stdout.decode("utf-8", "surrogateescape").split("\0"):
        if len(rec) > 3:
            out.append(rec[3:])
    return sorted(out)


def count_markers(root: Path, files: list[str]) -> dict[str, int]:
    counts = {}
    for f in files:
        p = root / f
        if p.is_file():
            data = p.read_bytes()
            # a UTF-16 requirements file (PowerShell's `pip freeze >`, which pip reads) is counted too
            utf16 = data.startswith((b"\xff\xfe", b"\xfe\xff"))
            n = data.decode("utf-16" if utf16 else "utf-8", "replace").count(MARKER)
            if n:
                counts[f] = n
    return counts


# -- the tools ---------------------------------------------------------------------------------------------------

def _env(extra_path: list[str]) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*extra_path, str(REPO)])
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    return env


def check_available(check_path: list[str]) -> bool:
    res = subprocess.run([sys.executable, "-c", "import compat.check"], env=_env(check_path), capture_output=True,
                         cwd=tempfile.gettempdir())
    return res.returncode == 0


def parse_check(output: str) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
    """`compat.check --format json` output (schema trl-compat/check-report/1: `files` = [{path, problems, markers,
    errors}]) -> ({path: problems}, {path: markers}). A file's read/parse errors count as problems: an empty list
    means the file passes."""
    data = json.loads(output)
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, list):
        raise ValueError("unrecognised compat.check JSON: no 'files' list")
    problems: dict[str, list[Any]] = {}
    markers: dict[str, list[Any]] = {}
    for entry in files:
        if not isinstance(entry, dict) or "path" not in entry:
            continue
        path = os.path.normpath(str(entry["path"]))
        probs = list(entry.get("problems") or [])
        probs += [{"line": None, "message": f"error: {e}"} for e in entry.get("errors") or []]
        problems[path] = probs
        markers[path] = list(entry.get("markers") or [])
    return problems, markers


def _parse_error(problem: dict[str, Any]) -> bool:
    text = str(problem.get("message", ""))
    return text.startswith("error:") and "does not parse" in text


def _source_error(problem: dict[str, Any], before: list[dict[str, Any]]) -> bool:
    """A parse error of a file that did not parse as written either (before migration; the line may have moved with
    markers added above it: code written for a newer Python than the one running the check)."""
    return _parse_error(problem) and any(_parse_error(p) for p in before)


def stack_files(root: Path) -> list[str]:
    return [f for f in code_files(root) if STACK_IMPORT.search(source_text(root / f))]


#: seconds one static-check run over one tree may take (the slowest tree of the corpus takes under a minute)
CHECK_TIMEOUT = 600


def run_check(root: Path, target: str, check_path: list[str], transformers: str | None = None) -> dict[str, Any]:
    """One static-check run over the tree: {"files": {path: problems}, "markers": {path: markers}} or {"error"}."""
    cmd = [sys.executable, "-m", "compat.check", ".", "--target-trl", target, "--format", "json"]
    if transformers:
        cmd += ["--target-transformers", transformers]
    try:
        res = subprocess.run(cmd, cwd=root, env=_env(check_path), capture_output=True, text=True, timeout=CHECK_TIMEOUT)
    except subprocess.TimeoutExpired:
        return {"error": f"the check ran past {CHECK_TIMEOUT} s (a hang in compat.check: report it)"}
    try:
        problems, markers = parse_check(res.stdout)
    except (ValueError, AttributeError) as exc:
        return {"error": f"rc={res.returncode}: {exc}; stderr: {res.stderr.strip()[-300:]}"}

    def rel(k: str) -> str:
        return os.path.relpath(k, root) if os.path.isabs(k) else k

    # files whose `trl` is the repository's own copy (the migrator leaves them alone): not files that import TRL
    own = [rel(os.path.normpath(str(f["path"]))) for f in json.loads(res.stdout).get("files", [])
           if isinstance(f, dict) and f.get("own_trl") and "path" in f]
    return {"files": {rel(k): v for k, v in problems.items()}, "markers": {rel(k): v for k, v in markers.items()},
            "own_trl": own}


def _cell_source(path: Path, cell: int | None) -> str | None:
    if path.suffix != ".ipynb":
        return path.read_bytes().decode("utf-8", "replace")
    try:
        # the check and the migrator number cells as the notebook does (markdown cells included)
        cells = json.loads(path.read_bytes()).get("cells", [])
        src = cells[cell or 0].get("source", "")
    except (ValueError, IndexError, AttributeError, TypeError):
        return None
    return "".join(src) if isinstance(src, list) else str(src)


def is_marked(root: Path, path: str, problem: dict[str, Any], markers: list[dict[str, Any]]) -> bool:
    """Does a `# TODO(trl-compat)` marker sit at the offending statement: on one of its lines, or in the block of
    comment lines right above it (where the migrator writes markers)?"""
    line = problem.get("line")
    if not line:
        return False
    cell = problem.get("cell")
    marker_lines = {m.get("line") for m in markers if m.get("cell") == cell}
    source = _cell_source(root / path, cell)
    if source is None:
        return line in marker_lines or line - 1 in marker_lines
    first, last = line, line
    try:
        from migrations.kinds import grammar  # the check's reading: a newer Python's f-strings too

        try:
            tree = grammar.parse(source)
        except SyntaxError:
            # a .py exported from a notebook (`!pip install` lines): parsed as the check parses it
            from compat.check import _mask_magics

            tree = grammar.parse(_mask_magics(source) or "")
        stmts = [n for n in ast.walk(tree) if isinstance(n, ast.stmt)
                 and n.lineno <= line <= (n.end_lineno or n.lineno)]
        if stmts:
            inner = max(stmts, key=lambda n: n.lineno)
            first, last = inner.lineno, inner.end_lineno or inner.lineno
    except (SyntaxError, ValueError):
        pass
    if any(first <= m <= last for m in marker_lines if m):
        return True
    lines = source.splitlines()
    k = first - 1
    while 1 <= k <= len(lines) and lines[k - 1].lstrip().startswith("#"):
        if k in marker_lines:
            return True
        k -= 1
    return False


def problem_text(problem: Any) -> str:
    if isinstance(problem, dict):
        line = problem.get("line")
        msg = problem.get("message") or problem.get("msg") or json.dumps(problem)[:160]
        return f"{line}: {msg}" if line else str(msg)
    return str(problem)


def ruff_bin() -> str | None:
    cand = Path(sys.executable).with_name("ruff")
    return str(cand) if cand.exists() else shutil.which("ruff")


def run_ruff(root: Path, ruff: str) -> collections.Counter | None:
    """F401/F811/F841 findings as a multiset of (file, code, message): line numbers left out, they move."""
    res = subprocess.run([ruff, "check", "--isolated", "--no-cache", "--select", RUFF_RULES, "--output-format",
                          "json", "--exit-zero", "--extend-include", "*.ipynb", "."], cwd=root, capture_output=True,
                         text=True)
    try:
        items = json.loads(res.stdout or "[]")
    except ValueError:
        return None
    out: collections.Counter = collections.Counter()
    for it in items:
        fn = os.path.relpath(it.get("filename", ""), root)
        out[(fn, it.get("code"), it.get("message"))] += 1
    return out


def run_smoke(root: Path, script: str, args: list[str], timeout: int) -> dict[str, Any]:
    if not (root / script).is_file():
        return {"script": script, "status": "missing", "error_type": None}
    cmd = [sys.executable, "-m", "compat.smoke", script, "--json", "--timeout", str(timeout), "--", *args]
    res = subprocess.run(cmd, cwd=root, env=_env([]), capture_output=True, text=True)
    try:
        data = json.loads(res.stdout)
    except ValueError:
        return {"script": script, "status": "error", "error_type": "smoke-runner",
                "error_message": (res.stderr or res.stdout).strip()[-300:]}
    return {"script": script, "status": data.get("status"), "error_type": data.get("error_type"),
            "error_message": (data.get("error_message") or "")[:200], "file": data.get("file"),
            "line": data.get("line"), "steps": data.get("steps"), "failure_class": data.get("failure_class")}


# -- one entry ---------------------------------------------------------------------------------------------------

def run_entry(entry: dict[str, Any], mirrors: Path | None, opts: argparse.Namespace,
              check_ok: bool, ruff: str | None, workdir: Path) -> dict[str, Any]:
    name = entry["name"]
    dest = workdir / re.sub(r"[^A-Za-z0-9_.-]", "_", name)
    if "tree" in entry:
        tree = copy_local(Path(entry["tree"]), dest)
    else:
        if mirrors is None:
            raise CorpusError("--mirrors is needed for repository entries")
        git_dir = mirrors / entry["repo"].replace("/", "+") / "repo"
        tree = materialise(git_dir, entry["commit"], dest, entry.get("subdir", ""))
    commit_all(dest)
    root = dest
    result: dict[str, Any] = {
        "name": name, "repo": entry.get("repo") or entry.get("tree"), "commit": entry.get("commit"),
        "era": entry.get("era", "?"), "negative": bool(entry.get("negative")), "files": tree.files,
        "missing_blobs": len(tree.missing_blobs),
    }
    trl = trl_files(root)
    result["trl_files"] = len(trl)
    result["trl_file_list"] = trl

    check_before: dict[str, dict[str, Any]] = {}
    stack_before: dict[str, dict[str, Any]] = {}
    if check_ok:
        for target in CHECK_TARGETS:
            check_before[target] = run_check(root, target, opts.check_path)
        if opts.stack:
            stack = stack_files(root)
            result["stack_files"] = len(stack)
            for tf in STACK_TARGETS:
                stack_before[tf] = run_check(root, "1.16.0", opts.check_path, tf)
    own_trl = sorted({f for c in check_before.values() for f in c.get("own_trl", ())} & set(trl))
    if own_trl:  # they import the repository's own copy of trl, which no TRL upgrade touches: not counted as trl files
        trl = [f for f in trl if f not in own_trl]
        result.update(trl_files=len(trl), trl_file_list=trl, own_trl_files=own_trl)
    ruff_before = run_ruff(root, ruff) if ruff else None

    report_path = workdir / f"{dest.name}.report.json"
    cmd = [sys.executable, "-m", "compat.migrate", ".", "--report", str(report_path)]
    if opts.target_trl:
        cmd += ["--target-trl", opts.target_trl]
    t0 = time.perf_counter()
    mig = subprocess.run(cmd, cwd=root, env=_env([]), capture_output=True, text=True)
    result["wall_s"] = round(time.perf_counter() - t0, 2)
    result["migrate_rc"] = mig.returncode
    try:
        report = json.loads(report_path.read_text())
    except (OSError, ValueError):
        report = None
        result["migrate_error"] = (mig.stderr or mig.stdout).strip()[-500:]

    changed = changed_files(root)
    result["changed"] = len(changed)
    result["changed_files"] = changed
    failed: dict[str, str] = {}
    manual: dict[str, int] = collections.Counter()
    if report:
        for f in report.get("files", []):
            path = os.path.normpath(f["path"])
            if f.get("status") == "failed":
                err = (f.get("errors") or [{}])[0]
                failed[path] = f"{err.get('kind', '?')}: {err.get('message', '')}"[:200]
            n = sum(1 for x in f.get("findings", []) if x.get("severity") == "manual")
            if n:
                manual[path] += n
        result["report_totals"] = report.get("totals")
        result["refused_dirty"] = report.get("refused_dirty") or {}
    result["failed"] = len(failed)
    result["failed_files"] = failed

    markers = count_markers(root, changed)
    result["markers_in_files"] = sum(markers.values())
    result["markers_in_report"] = sum(manual.values()) if report else None
    disagree = {}
    for path in sorted(set(markers) | set(manual)):
        if markers.get(path, 0) != manual.get(path, 0):
            disagree[path] = {"file": markers.get(path, 0), "report": manual.get(path, 0)}
    result["marker_disagreements"] = disagree

    if check_ok:
        check_after = {t: run_check(root, t, opts.check_path) for t in CHECK_TARGETS}
        result["check"] = {}
        for target in CHECK_TARGETS:
            before, after = check_before[target], check_after[target]
            if "error" in before or "error" in after:
                result["check"][target] = {"error": before.get("error") or after.get("error")}
                continue
            b, a, marks = before["files"], after["files"], after["markers"]
            still = {f: problem_text(a[f][0]) for f in trl if a.get(f)}
            # code that did not parse as written (an exercise notebook's `model = , # UPDATE HERE`) can carry no
            # marker: its parse errors, already there before migration, are counted apart (the file still fails)
            source_errors = {f: [p for p in a[f] if _source_error(p, b.get(f) or [])] for f in still}
            unparseable = {f: [problem_text(p) for p in v] for f, v in source_errors.items() if v}
            unmarked = {f: [problem_text(p) for p in a[f] if p not in source_errors[f]
                            and not is_marked(root, f, p, marks.get(f, []))] for f in still}
            unmarked = {f: v for f, v in unmarked.items() if v}
            result["check"][target] = {
                "unparseable_source": unparseable,
                "pass_before": sum(1 for f in trl if not b.get(f)),
                "pass_after": sum(1 for f in trl if not a.get(f)),
                "failing_after": still,
                "problems_after": sum(len(a[f]) for f in still),
                "unmarked_files": len(unmarked),
                "unmarked_problems": sum(len(v) for v in unmarked.values()),
                "unmarked": unmarked,
                "markers_seen": sum(len(v) for v in marks.values()),
            }
        if opts.stack:
            result["stack"] = {}
            for tf in STACK_TARGETS:
                before, after = stack_before[tf], run_check(root, "1.16.0", opts.check_path, tf)
                if "error" in before or "error" in after:
                    result["stack"][tf] = {"error": before.get("error") or after.get("error")}
                    continue

                def mine(problems: list[dict[str, Any]]) -> list[dict[str, Any]]:
                    return [p for p in problems if str(p.get("name", "")).startswith(STACK_ROOTS)]

                b, a, marks = before["files"], after["files"], after["markers"]
                fail_b = {f for f in stack if mine(b.get(f, []))}
                fail_a = {f: mine(a.get(f, [])) for f in stack if mine(a.get(f, []))}
                unmarked = {f: [problem_text(p) for p in ps if not is_marked(root, f, p, marks.get(f, []))]
                            for f, ps in fail_a.items()}
                unmarked = {f: v for f, v in unmarked.items() if v}
                result["stack"][tf] = {
                    "pass_before": len(stack) - len(fail_b), "pass_after": len(stack) - len(fail_a),
                    "problems_before": sum(len(mine(b.get(f, []))) for f in stack),
                    "problems_after": sum(len(v) for v in fail_a.values()),
                    "unmarked_files": len(unmarked), "unmarked": unmarked,
                }
    else:
        result["check"] = None

    if ruff and ruff_before is not None:
        ruff_after = run_ruff(root, ruff)
        if ruff_after is not None:
            new = ruff_after - ruff_before
            result["ruff_new"] = sum(new.values())
            result["ruff_new_findings"] = [f"{f}: {c} {m}" for (f, c, m), n in sorted(new.items()) for _ in range(n)]
    result.setdefault("ruff_new", None)

    if opts.smoke:
        result["smoke"] = [run_smoke(root, e["path"], list(e.get("args", [])), opts.smoke_timeout)
                           for e in entry.get("entry", [])]
    result["ok"] = not (result["negative"] and result["changed"])
    return result


# -- output ------------------------------------------------------------------------------------------------------

def _checkcell(r: dict[str, Any], target: str) -> str:
    c = r.get("check")
    if c is None:
        return "n/a"
    c = c.get(target, {})
    if "error" in c:
        return "error"
    return f"{c['pass_before']}->{c['pass_after']}/{r['trl_files']}"


def _unmarkedcell(r: dict[str, Any], target: str) -> str:
    c = (r.get("check") or {}).get(target)
    if not c or "error" in c:
        return "n/a"
    return str(c["unmarked_problems"])


def print_table(results: list[dict[str, Any]], check_ok: bool) -> None:
    cols = ["name", "era", "trl", "chg", "fail", "mark f/r", "1.16 pass", "unm", "1.13 pass", "unm", "ruff+",
            "wall s"]
    rows = []
    for r in results:
        if "error" in r:
            rows.append([r["name"], r.get("era", "?"), *["-"] * 9, "ERROR"])
            continue
        mark = f"{r['markers_in_files']}/{r['markers_in_report'] if r['markers_in_report'] is not None else '?'}"
        if r["marker_disagreements"]:
            mark += "!"
        rows.append([r["name"] + (" (neg)" if r["negative"] else ""), r["era"], str(r["trl_files"]),
                     str(r["changed"]), str(r["failed"]), mark, _checkcell(r, "1.16.0"), _unmarkedcell(r, "1.16.0"),
                     _checkcell(r, "1.13.0"), _unmarkedcell(r, "1.13.0"),
                     "n/a" if r["ruff_new"] is None else str(r["ruff_new"]), f"{r['wall_s']:.1f}"])
    widths = [max(len(c), *(len(row[i]) for row in rows)) if rows else len(c) for i, c in enumerate(cols)]
    fmt = "  ".join(f"{{:<{w}}}" if i < 2 else f"{{:>{w}}}" for i, w in enumerate(widths))
    print(fmt.format(*cols))
    print(fmt.format(*("-" * w for w in widths)))
    for row in rows:
        print(fmt.format(*row))
    ok = [r for r in results if "error" not in r]
    tot = totals(ok)
    print()
    print(f"total: {len(ok)} entries ({sum(r['negative'] for r in ok)} negative), {tot['trl_files']} files import trl, "
          f"{tot['changed']} files changed, {tot['failed']} failed, markers {tot['markers_in_files']} in files / "
          f"{tot['markers_in_report']} in reports, ruff new F401/F811/F841: {tot['ruff_new']}, "
          f"migrate wall {tot['wall_s']:.1f} s")
    if not check_ok:
        print(f"static check (1.16 / 1.13): {NA}")
    else:
        for t in CHECK_TARGETS:
            c = tot["check"][t]
            pct = 100.0 * c["pass_after"] / max(1, tot["trl_files"])
            if c.get("errors"):
                print(f"static check on TRL {t}: {c['errors']} entries could not be checked (see JSON)")
                continue
            print(f"static check on TRL {t}: {c['pass_before']} -> {c['pass_after']} of {tot['trl_files']} trl files "
                  f"pass ({pct:.1f}% after); {c['unmarked_problems']} problems in {c['unmarked_files']} failing files "
                  f"carry no marker at the offending statement"
                  + (f"; {c['unparseable_files']} failing files do not parse as written (counted as failing)"
                     if c.get("unparseable_files") else ""))
    for r in ok:
        if r["negative"] and r["changed"]:
            print(f"FAIL: negative control {r['name']} changed {r['changed']} file(s): {', '.join(r['changed_files'][:8])}")
        if r["marker_disagreements"]:
            print(f"marker mismatch in {r['name']}: {json.dumps(r['marker_disagreements'])[:400]}")
        seen = {c.get("markers_seen") for c in (r.get("check") or {}).values() if "error" not in c}
        if seen and seen != {r["markers_in_files"]}:
            print(f"marker count of compat.check differs in {r['name']}: check {sorted(seen)}, "
                  f"files {r['markers_in_files']}")
        if r["failed_files"]:
            for f, why in r["failed_files"].items():
                print(f"failed file in {r['name']}: {f}: {why}")
        if r.get("migrate_error"):
            print(f"migrate error in {r['name']} (rc={r['migrate_rc']}): {r['migrate_error']}")
        if r.get("refused_dirty"):
            print(f"dirty-tree guard refused in {r['name']}: {list(r['refused_dirty'])[:5]}")
    for r in results:
        if "error" in r:
            print(f"ERROR {r['name']}: {r['error']}")
    if check_ok:
        for r in ok:
            still = (r.get("check") or {}).get("1.16.0", {}).get("failing_after") or {}
            unmarked = (r.get("check") or {}).get("1.16.0", {}).get("unmarked") or {}
            for f, why in still.items():
                flag = " [UNMARKED]" if f in unmarked else ""
                if f in ((r.get("check") or {}).get("1.16.0", {}).get("unparseable_source") or {}):
                    flag += " [DOES NOT PARSE AS WRITTEN]"
                print(f"still fails 1.16 check{flag}: {r['name']}/{f}: {why}")
    if any(r.get("smoke") for r in ok):
        print()
        for r in ok:
            for s in r.get("smoke") or []:
                where = f" at {os.path.basename(s['file'] or '')}:{s['line']}" if s.get("file") else ""
                print(f"smoke {r['name']}/{s['script']}: {s['status']} [{s.get('failure_class') or '-'}] "
                      f"{s.get('error_type') or ''}{where} {(s.get('error_message') or '')[:120]}")
        runs = [s for r in ok for s in r.get("smoke") or [] if s["status"] not in ("missing",)]
        failed = [s for s in runs if s["status"] != "passed"]
        classes: dict[str, int] = {}
        for s in failed:
            classes[s.get("failure_class") or "unclassified"] = classes.get(s.get("failure_class") or "unclassified",
                                                                            0) + 1
        share = classes.get("smoke-limitation", 0) / len(failed) if failed else 0.0
        print(f"smoke: {len(runs) - len(failed)}/{len(runs)} entry scripts trained; failures by class "
              f"{dict(sorted(classes.items()))}; smoke-limitation share of failures {share:.0%}")


def _summary(r: dict[str, Any]) -> dict[str, Any]:
    out = {k: r.get(k) for k in ("changed", "failed", "markers_in_files", "markers_in_report", "ruff_new")}
    for t, c in (r.get("check") or {}).items():
        if "error" not in c:
            out[f"pass {t}"] = c["pass_after"]
    return out


def print_comparison(before: dict[str, Any], results: list[dict[str, Any]]) -> None:
    """Entry by entry, the figures that differ from an earlier run (`--compare OLD.json`)."""
    old = {e["name"]: e for e in before.get("entries", []) if "error" not in e}
    print()
    print(f"compared with the earlier run ({len(old)} entries):")
    moved = 0
    for r in results:
        if "error" in r or r["name"] not in old:
            continue
        a, b = _summary(old[r["name"]]), _summary(r)
        diff = [f"{k} {a.get(k)}->{b.get(k)}" for k in b if a.get(k) != b.get(k)]
        if diff:
            moved += 1
            print(f"  {r['name']}: {', '.join(diff)}")
    if not moved:
        print("  no figure moved")


def totals(results: list[dict[str, Any]]) -> dict[str, Any]:
    tot: dict[str, Any] = {k: sum(r[k] for r in results) for k in ("trl_files", "changed", "failed",
                                                                   "markers_in_files", "wall_s")}
    tot["markers_in_report"] = sum(r["markers_in_report"] or 0 for r in results)
    rn = [r["ruff_new"] for r in results]
    tot["ruff_new"] = None if any(x is None for x in rn) else sum(rn)
    if results and all(r.get("check") for r in results):
        tot["check"] = {}
        for t in CHECK_TARGETS:
            cs = [r["check"][t] for r in results]
            if any("error" in c for c in cs):
                tot["check"][t] = {"pass_before": 0, "pass_after": 0, "errors": sum("error" in c for c in cs)}
                continue
            tot["check"][t] = {k: sum(c[k] for c in cs) for k in ("pass_before", "pass_after", "problems_after",
                                                                   "unmarked_files", "unmarked_problems")}
            tot["check"][t]["unparseable_files"] = sum(len(c.get("unparseable_source") or {}) for c in cs)
    else:
        tot["check"] = None
    tot["negative_failures"] = [r["name"] for r in results if r["negative"] and r["changed"]]
    return tot


def print_stack(results: list[dict[str, Any]]) -> None:
    """`--stack`: files importing transformers/peft that pass the transformers/peft/accelerate part of the check."""
    print("\nStack check (TRL 1.16; problems naming transformers/peft/accelerate only), per era:")
    print("| era | files importing transformers/peft | " + " | ".join(
        f"pass on {tf} before -> after | unmarked after (files)" for tf in STACK_TARGETS) + " |")
    print("|---|---|" + "---|---|" * len(STACK_TARGETS))
    eras: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        if r.get("stack"):
            eras.setdefault(r["era"], []).append(r)
    rows = [*eras.items(), ("total", [r for rs in eras.values() for r in rs])]
    for era, rs in rows:
        n = sum(r.get("stack_files", 0) for r in rs)
        cells = []
        for tf in STACK_TARGETS:
            cs = [r["stack"][tf] for r in rs if "error" not in r["stack"][tf]]
            pb, pa = sum(c["pass_before"] for c in cs), sum(c["pass_after"] for c in cs)
            pct = f" ({100 * pa / n:.1f}%)" if n and era == "total" else ""
            cells += [f"{pb} -> {pa}{pct}", str(sum(c["unmarked_files"] for c in cs))]
        print(f"| {era} | {n} | " + " | ".join(cells) + " |")


def load_corpus(path: Path) -> list[dict[str, Any]]:
    data = tomllib.loads(path.read_text())
    entries = list(data.get("repo", []))
    for loc in data.get("local", []):
        entries.append(dict(loc, tree=str((REPO / loc["path"]).resolve())))
    names = [e["name"] for e in entries]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise CorpusError(f"{path}: duplicate entry names {sorted(dup)}")
    return entries


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirrors", type=Path, help="folder of git mirrors: MIRRORS/OWNER+NAME/repo")
    ap.add_argument("--corpus", type=Path, default=CORPUS, help="the corpus file (default: benchmarks/corpus.toml)")
    ap.add_argument("--only", action="append", default=[], help="run only this entry (repeatable, or NAME,NAME)")
    ap.add_argument("--tree", type=Path, action="append", default=[], help="run on a local folder (repeatable)")
    ap.add_argument("--target-trl", help="passed to the migrator (default: its own choice)")
    ap.add_argument("--check-path", action="append", default=[],
                    help="folder put first on PYTHONPATH for `python -m compat.check` only (e.g. another worktree)")
    ap.add_argument("--smoke", action="store_true", help="smoke-run each entry script after migration")
    ap.add_argument("--smoke-timeout", type=int, default=300)
    ap.add_argument("--stack", action="store_true",
                    help="also check the files importing transformers/peft for transformers/peft/accelerate problems "
                         f"(TRL 1.16, transformers {' and '.join(STACK_TARGETS)}), before and after")
    ap.add_argument("--json", type=Path, help="write every figure to this file")
    ap.add_argument("--keep", action="store_true", help="keep the migrated trees (their path is printed)")
    ap.add_argument("--compare", type=Path, help="an earlier --json output: print what moved, entry by entry")
    opts = ap.parse_args(argv)

    if opts.tree:
        entries = [{"name": p.resolve().name, "tree": str(p.resolve()), "era": "local"} for p in opts.tree]
    else:
        entries = load_corpus(opts.corpus)
        only = {n for o in opts.only for n in o.split(",") if n}
        if only:
            unknown = only - {e["name"] for e in entries}
            if unknown:
                ap.error(f"unknown entry name(s): {', '.join(sorted(unknown))}")
            entries = [e for e in entries if e["name"] in only]
        if any("repo" in e for e in entries) and opts.mirrors is None:
            ap.error("--mirrors is required for repository entries (or use --tree DIR)")

    check_ok = check_available(opts.check_path)
    ruff = ruff_bin()
    print(f"compat.check: {'available' if check_ok else NA}; ruff: {ruff or 'not installed (n/a)'}; "
          f"migrator from {REPO}", flush=True)
    workdir = Path(tempfile.mkdtemp(prefix="trl-compat-corpus-"))
    results = []
    try:
        for e in entries:
            t0 = time.perf_counter()
            try:
                r = run_entry(e, opts.mirrors, opts, check_ok, ruff, workdir)
            except CorpusError as exc:
                r = {"name": e["name"], "era": e.get("era", "?"), "error": str(exc)}
            print(f"  {e['name']}: {'error' if 'error' in r else 'done'} in {time.perf_counter() - t0:.1f} s",
                  flush=True)
            results.append(r)
            if opts.json:  # written after every entry, so an interrupted run keeps what it measured
                opts.json.write_text(json.dumps({"schema": "trl-compat/corpus-bench/1", "partial": True,
                                                 "entries": results}, indent=2, default=str))
    finally:
        if opts.keep:
            print(f"trees kept under {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    print()
    print_table(results, check_ok)
    ok = [r for r in results if "error" not in r]
    if opts.stack:
        print_stack(ok)
    if opts.json:
        payload = {"schema": "trl-compat/corpus-bench/1", "target_trl": opts.target_trl,
                   "check_available": check_ok, "ruff": ruff, "totals": totals(ok), "entries": results}
        opts.json.write_text(json.dumps(payload, indent=2, default=str))
        print(f"wrote {opts.json}")
    if opts.compare:
        print_comparison(json.loads(opts.compare.read_text()), results)
    bad = totals(ok)["negative_failures"]
    return 1 if bad or len(ok) < len(results) else 0


if __name__ == "__main__":
    sys.exit(main())
