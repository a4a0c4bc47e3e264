"""A migrator that survives its inputs (issue 18 items 2, 4, 5, 6, 7 and issue 13's faults), in-process where a
misbehaving input cannot take the test run down; the ones that could (a crash, a hang) run in a subprocess."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import libcst as cst
import pytest

from compat.migrate import migrate_paths, migrate_source
from compat.migrate import runner
from migrations.base import Options, PythonMigration, RuleContext

from ._util import NEW_SFT, OLD_SFT, REPO, RULE, run_cli

ONLY = dict(rules=[RULE], allow_dirty=True)


def write(path, text: str | bytes):
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def errors_of(report, name: str) -> list:
    (entry,) = [f for f in report.files if os.path.basename(f.path) == name]
    return entry.errors


# -- 2. bounded work: streaming, size and time budgets, regular files only -------------------------------------------

def test_each_file_is_written_as_soon_as_it_is_done(tmp_path):
    first = write(tmp_path / "a.py", OLD_SFT)
    write(tmp_path / "b.py", OLD_SFT)
    seen = []

    def on_file(entry):  # when b.py is done, a.py must already be on disk
        seen.append((os.path.basename(entry.path), first.read_text() == NEW_SFT))

    migrate_paths([str(tmp_path)], on_file=on_file, jobs=1, **ONLY)
    assert seen == [("a.py", True), ("b.py", True)]


def test_a_huge_generated_file_is_skipped_and_the_healthy_one_beside_it_migrated(tmp_path):
    healthy = write(tmp_path / "a.py", OLD_SFT)
    big = write(tmp_path / "big.py", OLD_SFT + "x = 1\n" * 50_000)  # 300 kB
    report = migrate_paths([str(tmp_path)], max_file_bytes=100_000, **ONLY)
    assert healthy.read_text() == NEW_SFT
    assert big.read_text().startswith(OLD_SFT)
    (error,) = errors_of(report, "big.py")
    assert error.kind == "too-large" and "skipped: too large" in error.message and "--max-file-size" in error.message


def test_a_file_over_the_time_budget_is_skipped_and_the_others_migrated(tmp_path):
    healthy = write(tmp_path / "a.py", OLD_SFT)
    slow = OLD_SFT + "if a:\n    pass\n" + "".join(f"elif a == {i}:\n    pass\n" for i in range(600))
    write(tmp_path / "slow.py", slow)
    report = migrate_paths([str(tmp_path)], time_budget=0.05, jobs=1, **ONLY)
    (error,) = errors_of(report, "slow.py")
    assert error.kind == "too-slow" and "--time-budget" in error.message
    assert (tmp_path / "slow.py").read_text() == slow
    assert healthy.read_text() == NEW_SFT


@pytest.mark.slow
def test_a_fifo_and_a_link_to_dev_zero_do_not_hang_or_crash(tmp_path):
    write(tmp_path / "a.py", OLD_SFT)
    os.mkfifo(tmp_path / "pipe.py")
    os.symlink("/dev/zero", tmp_path / "zero.py")
    proc = run_cli("--allow-dirty", "--allow-no-vcs", "--only", RULE.id, "--report", "r.json", ".", cwd=tmp_path, timeout=30)
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()
    proc = run_cli("--allow-dirty", "--allow-no-vcs", "--only", RULE.id, "pipe.py", cwd=tmp_path, timeout=30)  # named: the same
    assert proc.returncode == 2 and b"not a regular file" in proc.stderr, proc.stderr.decode()
    assert (tmp_path / "a.py").read_text() == NEW_SFT
    files = {f["path"]: f for f in json.loads((tmp_path / "r.json").read_text())["files"]}
    assert files["pipe.py"]["errors"][0]["kind"] == "not-regular"
    assert "outside the tree" in files["zero.py"]["findings"][0]["message"]


# -- 3. concurrent runs ----------------------------------------------------------------------------------------------

def test_a_write_landing_between_the_check_and_the_replace_is_never_lost(tmp_path, monkeypatch):
    """The compare-and-swap is atomic: another run's write that arrives while this one is between "the file is still
    the one I read" and the rename either waits (and then refuses), or is seen. Deterministic: the other writer is
    started exactly in that window (when this write makes its temporary file)."""
    import tempfile
    import threading

    path = write(tmp_path / "a.py", "old\n")
    real_mkstemp = tempfile.mkstemp
    other: dict = {}

    def other_run() -> None:
        try:
            runner.atomic_write(str(path), b"old\n", b"theirs\n")
            other["written"] = True
        except Exception as exc:  # the expected refusal
            other["refused"] = exc

    def mkstemp(*args, **kwargs):
        monkeypatch.setattr(tempfile, "mkstemp", real_mkstemp)
        thread = threading.Thread(target=other_run)
        thread.start()
        thread.join(0.5)  # it finishes at once without a lock; with one it waits for this write
        other["thread"] = thread
        return real_mkstemp(*args, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    runner.atomic_write(str(path), b"old\n", b"mine\n")
    other["thread"].join(5)
    final = path.read_bytes()
    assert final == b"mine\n" and "refused" in other, (final, other)  # this write was reported: it must be there


# -- 4. confinement ----------------------------------------------------------------------------------------------------

def test_a_file_link_out_of_the_tree_is_not_written_through(tmp_path):
    outside = write(tmp_path / "out" / "ext.py", OLD_SFT)
    repo = tmp_path / "repo"
    write(repo / "a.py", OLD_SFT)
    os.symlink("../out/ext.py", repo / "ext.py")
    inside = write(repo / "lib" / "real.py", OLD_SFT)
    os.symlink("lib/real.py", repo / "alias.py")  # a link inside the tree is still followed
    report = migrate_paths([str(repo)], **ONLY)
    assert outside.read_text() == OLD_SFT
    assert inside.read_text() == NEW_SFT and (repo / "a.py").read_text() == NEW_SFT
    (entry,) = [f for f in report.files if f.path.endswith("ext.py")]
    assert not entry.written and "outside the tree" in entry.findings[0].message
    report = migrate_paths([str(repo / "ext.py")], **ONLY)  # named on the command line: the same
    assert outside.read_text() == OLD_SFT and not any(f.written for f in report.files)


def test_a_read_only_file_is_refused_unless_forced(tmp_path):
    path = write(tmp_path / "ro.py", OLD_SFT)
    path.chmod(0o444)
    report = migrate_paths([str(path)], **ONLY)
    (error,) = errors_of(report, "ro.py")
    assert error.kind == "read-only" and "--force-read-only" in error.message
    assert path.read_text() == OLD_SFT and report.exit_code == 2
    report = migrate_paths([str(path)], force_read_only=True, **ONLY)
    assert path.read_text() == NEW_SFT and stat.S_IMODE(path.stat().st_mode) == 0o444


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to make a file of another owner")
def test_a_file_of_another_owner_keeps_its_owner_or_is_refused(tmp_path, monkeypatch):
    """A file owned by someone else in a folder the user may write: replacing it would hand it to the user. Run as
    root here, so the user's lack of the right to chown is reproduced by `os.chown` refusing, as it does for them."""
    path = write(tmp_path / "theirs.py", OLD_SFT)
    os.chown(path, 12345, 12345)
    path.chmod(0o666)

    def chown(*_args, **_kwargs):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "chown", chown)
    report = migrate_paths([str(path)], **ONLY)
    st = path.stat()
    assert (st.st_uid, st.st_gid) == (12345, 12345) and path.read_text() == OLD_SFT
    (error,) = errors_of(report, "theirs.py")
    assert "uid 12345" in error.message and "not written" in error.message
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".trl-compat.tmp")]


# -- 5. no tracebacks --------------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_a_non_utf8_file_name_with_diff_and_report(tmp_path):
    name = b"caf\xe9.py"
    with open(os.path.join(os.fsencode(tmp_path), name), "w") as fh:
        fh.write(OLD_SFT)
    proc = run_cli("--diff", "--only", RULE.id, "--report", "r.json", ".", cwd=tmp_path)
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr, proc.stderr.decode()
    assert b"+++ b/" + name in proc.stdout
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    (entry,) = report["files"]
    assert os.fsencode(entry["path"]) == name  # the raw bytes come back from the JSON (\udcNN escapes)
    proc = run_cli("--allow-dirty", "--allow-no-vcs", "--only", RULE.id, ".", cwd=tmp_path)
    assert proc.returncode == 0 and b"rewrote caf\\xe9.py" in proc.stderr, proc.stderr.decode()


@pytest.mark.slow
def test_a_closed_stdout_ends_quietly(tmp_path):
    body = "".join(f'cfg{j} = SFTConfig(output_dir="out", loss_type="chunked_nll")\n' for j in range(18))
    for i in range(40):  # diffs written file by file, in all more than a pipe's 64 kB buffer
        write(tmp_path / f"m{i:03d}.py", "from trl import SFTConfig\n" + body)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(f"{sys.executable} -m compat.migrate --diff --only {RULE.id} . | head -1", shell=True,
                          cwd=tmp_path, env=env, capture_output=True, timeout=60)
    assert proc.stdout.startswith(b"diff --git")
    assert b"Traceback" not in proc.stderr and b"BrokenPipe" not in proc.stderr, proc.stderr.decode()


# -- 6. deep but valid code --------------------------------------------------------------------------------------------

DEEP_VALID = {
    "plus400": "x = " + " + ".join(["a"] * 400) + "\n",
    "elif500": "if a:\n    pass\n" + "".join(f"elif a == {i}:\n    pass\n" for i in range(500)),
    "strings1000": "x = (" + " ".join(['"s"'] * 1000) + ")\n",
}


@pytest.mark.parametrize("name", sorted(DEEP_VALID))
def test_deep_but_valid_code_is_migrated(tmp_path, name):
    path = write(tmp_path / f"{name}.py", OLD_SFT + DEEP_VALID[name])
    report = migrate_paths([str(path)], jobs=1, **ONLY)
    assert report.exit_code == 0, [str(e) for f in report.files for e in f.errors]
    assert path.read_text() == NEW_SFT + DEEP_VALID[name]


@pytest.mark.parametrize("body", [
    "x = (" + " ".join(['"s"'] * 4000) + ")\n",  # libcst's parser refuses it (valid Python)
    "x = " + " + ".join(["a"] * 3000) + "\n",  # CPython refuses it too; libcst would take seconds first
    "x = " + "(" * 300 + "a" + ")" * 300 + "\n",  # "too many nested parentheses"
])
def test_too_deep_code_is_a_clear_finding_that_blames_no_rule(body):
    result = migrate_source(OLD_SFT + body, rules=[RULE])
    (error,) = result.errors
    assert error.kind == "too-deep" and error.rule is None and "too deep for the parser" in error.message
    assert "bug in the rule" not in error.message and result.text == OLD_SFT + body


def test_a_recursion_error_in_a_rule_is_not_blamed_on_the_rule():
    result = migrate_source(OLD_SFT + DEEP_VALID["plus400"], rules=[RULE])  # the caller's own, shallow stack
    assert result.ok or (result.errors[0].kind == "too-deep" and result.errors[0].rule is None)


@pytest.mark.slow
def test_10000_nested_parentheses_among_healthy_files_under_j2(tmp_path):
    """libcst's native parser dies with SIGSEGV on this: the run must survive it (issue 13's faults)."""
    for i in range(12):
        write(tmp_path / f"ok{i:02d}.py", OLD_SFT)
    write(tmp_path / "deep.py", OLD_SFT + "x = " + "(" * 10_000 + "a" + ")" * 10_000 + "\n")
    for jobs in ("1", "2"):
        proc = run_cli("--allow-dirty", "--allow-no-vcs", "-j", jobs, "--only", RULE.id, "--report", "r.json", ".", cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr.decode()[-2000:]
        report = json.loads((tmp_path / "r.json").read_text())
        failed = [f["path"] for f in report["files"] if f["status"] == "failed"]
        assert failed == ["deep.py"]
        (deep,) = [f for f in report["files"] if f["path"] == "deep.py"]
        assert deep["errors"][0]["kind"] == "too-deep" and deep["errors"][0]["rule"] is None
        assert all((tmp_path / f"ok{i:02d}.py").read_text() == NEW_SFT for i in range(12))
        for i in range(12):
            write(tmp_path / f"ok{i:02d}.py", OLD_SFT)


class _Crash(PythonMigration):
    """Fault injection: a rule that kills its process (as a native parser crash would) on one file."""

    id = "test-crash"
    release = "1.13"
    summary = "kills the worker on crash.py"
    triggers = ("loss_type",)

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        if ctx.path and ctx.path.endswith("crash.py"):
            os.kill(os.getpid(), 9)
        return wrapper.module


@pytest.mark.slow
def test_the_pool_survives_a_dead_worker(tmp_path):
    for i in range(12):
        write(tmp_path / f"ok{i:02d}.py", OLD_SFT)
    write(tmp_path / "crash.py", OLD_SFT)
    report = migrate_paths([str(tmp_path)], rules=[_Crash(), RULE], allow_dirty=True, jobs=2)
    failed = [os.path.basename(f.path) for f in report.files if f.status == "failed"]
    assert failed == ["crash.py"]
    assert "crashed" in report.files[0].errors[0].message and "SIGKILL" in report.files[0].errors[0].message
    assert all((tmp_path / f"ok{i:02d}.py").read_text() == NEW_SFT for i in range(12))


# -- 7. fidelity ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("lead", ["\f", "  \f", "\f\f"])
def test_a_leading_form_feed_is_kept(lead):
    result = migrate_source(lead + OLD_SFT, rules=[RULE])
    assert result.ok and result.text == lead + NEW_SFT


def test_a_setup_py_with_a_syntax_error_says_its_pin_was_not_checked():
    from migrations.v1_13.dependency_manifests import MIGRATION as MANIFESTS

    src = 'from setuptools import setup\nsetup(name="x", install_requires=["trl==0.11"]\n'
    result = migrate_source(src, rules=[MANIFESTS], path="setup.py", options=Options())
    assert not result.changed
    (finding,) = result.findings
    assert finding.severity == "manual" and "setup.py does not parse" in finding.message


def test_an_invalid_pyproject_is_reported_as_such():
    from migrations.v1_13.dependency_manifests import MIGRATION as MANIFESTS

    src = '[project]\nname = "x"\ndependencies = ["trl==0.11",\n'
    result = migrate_source(src, rules=[MANIFESTS], path="pyproject.toml")
    assert result.ok and not result.changed, result.errors
    (finding,) = result.findings
    assert "not valid TOML" in finding.message and "NUL" not in finding.message


def test_an_nbformat_3_notebook_is_named_as_such(tmp_path):
    nb = {"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": [{"cells": [
        {"cell_type": "code", "input": ["from trl import SFTConfig\n", 'SFTConfig(loss_type="chunked_nll")\n'],
         "language": "python", "outputs": []}]}]}
    result = migrate_source(json.dumps(nb), rules=[RULE], path="old.ipynb")
    (error,) = result.errors
    assert "nbformat 3" in error.message and "nbconvert" in error.message


def test_a_thread_left_running_never_lowers_the_recursion_limit_under_another(tmp_path):
    """A file past its time budget keeps its thread (libcst's parser cannot be interrupted); when it finishes, the
    limit it restores must not fall under a deep file another thread is in the middle of (the tox `mixed` env hit it)."""
    import sys
    import threading

    from compat.migrate import depth

    start_limit = sys.getrecursionlimit()
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: list[int] = []

    def first():
        with depth.raised(50_000):
            first_in.set()
            second_in.wait(5)
        first_out.set()

    def second():
        first_in.wait(5)
        with depth.raised(40_000):
            second_in.set()
            first_out.wait(5)
            seen.append(sys.getrecursionlimit())  # the first thread has left: still raised for this one
            with depth.lowered(1000):  # the ast pre-check of this thread's file, alone now
                seen.append(sys.getrecursionlimit())
            seen.append(sys.getrecursionlimit())

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == [50_000, 1000, 50_000]
    assert sys.getrecursionlimit() == start_limit


def test_a_notebook_heavy_with_outputs_gets_a_larger_budget(tmp_path):
    """A notebook's outputs are JSON the migrator never parses as code: 8 times the budget (here 300 kB of output
    against 100 kB); a notebook past 8 times the budget is still skipped."""
    outputs = [{"output_type": "stream", "name": "stdout", "text": ["x" * 300_000]}]
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "execution_count": 1, "outputs": outputs,
                     "source": OLD_SFT.splitlines(keepends=True)}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "big.ipynb"
    path.write_text(json.dumps(nb, indent=1))
    report = migrate_paths([str(tmp_path)], max_file_bytes=100_000, **ONLY)
    assert not errors_of(report, "big.ipynb")
    after = json.loads(path.read_text())
    assert "".join(after["cells"][0]["source"]) == NEW_SFT and after["cells"][0]["outputs"] == outputs
    path.write_text(json.dumps(nb | {"metadata": {"pad": "y" * 900_000}}))
    (error,) = errors_of(migrate_paths([str(tmp_path)], max_file_bytes=100_000, **ONLY), "big.ipynb")
    assert error.kind == "too-large"
