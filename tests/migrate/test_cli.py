"""The command line as a user runs it: a subprocess in a real folder (and a real git repo)."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys

import pytest
import yaml

from compat.migrate.cli import main

from ._util import NEW_SFT, OLD_SFT, REPO, commit_all, git, git_repo, run_cli


def cli(*args: str, cwd, capsys, monkeypatch) -> tuple[int, str, str]:
    """`main(args)` in this process (the same code path as the subprocess, minus interpreter start-up)."""
    monkeypatch.chdir(cwd)
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def repo(tmp_path):
    repo = git_repo(tmp_path / "repo")
    (repo / "train.py").write_text(OLD_SFT)
    (repo / "crlf_nonl.py").write_bytes(b"import trl\r\ncfg = trl.SFTConfig(loss_type='chunked_nll')")
    (repo / "manual.py").write_text("def f(args):\n    args.loss_type = 'chunked_nll'\n")
    (repo / "other.py").write_text("print('hello')\n")
    commit_all(repo)
    return repo


@pytest.mark.slow
def test_diff_applies_with_git_apply_and_writes_nothing(repo):
    extra = {
        "bom.py": b"\xef\xbb\xbffrom trl import SFTConfig\r\nc = SFTConfig(loss_type='chunked_nll')",
        "latin1.py": b"# -*- coding: latin-1 -*-\nfrom trl import SFTConfig\nx = '\xe9'\nSFTConfig(loss_type='chunked_nll')\n",
        "nb.ipynb": json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                                           "source": ["import trl\n", "trl.SFTConfig(loss_type='chunked_nll')"]}],
                                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1).encode() + b"\n",
    }
    for name, data in extra.items():
        (repo / name).write_bytes(data)
    commit_all(repo)
    proc = run_cli("--diff", ".", "--only", "sft-chunked-nll-loss-type", cwd=repo)
    assert proc.returncode == 1, proc.stderr
    assert git(repo, "status", "--porcelain") == ""  # nothing written
    patch = proc.stdout
    assert b"--- a/train.py" in patch and b"+++ b/crlf_nonl.py" in patch
    subprocess.run(["git", "apply", "--check", "-"], cwd=repo, input=patch, check=True)
    subprocess.run(["git", "apply", "-"], cwd=repo, input=patch, check=True)
    assert (repo / "train.py").read_text() == NEW_SFT
    assert (repo / "crlf_nonl.py").read_bytes() == b"import trl\r\ncfg = trl.SFTConfig(loss_type='nll')"
    for name, data in extra.items():  # BOM, latin-1 and notebook JSON bytes: the patch carries the exact bytes
        assert (repo / name).read_bytes() == data.replace(b"'chunked_nll'", b"'nll'")
    again = run_cli("--check", ".", "--only", "sft-chunked-nll-loss-type", cwd=repo)
    # nothing left to rewrite, but the applied patch left a marker in manual.py: the ledger keeps --check red
    assert again.returncode == 1 and again.stdout == b""
    assert b"manual.py:2:5: manual: [sft-chunked-nll-loss-type]" in again.stderr
    assert b"1 manual step(s) left" in again.stderr
    accepted = run_cli("--check", ".", "--only", "sft-chunked-nll-loss-type", "--accept-markers", cwd=repo)
    assert accepted.returncode == 0 and b"1 manual step(s) left" in accepted.stderr


@pytest.mark.slow
def test_check_lists_files_and_exits_1_then_write_exits_0(repo, capsys, monkeypatch):
    check = run_cli("--check", ".", cwd=repo)
    assert check.returncode == 1
    assert sorted(check.stdout.decode().split("\n")[:-1]) == [
        "would rewrite crlf_nonl.py", "would rewrite manual.py", "would rewrite train.py"
    ]
    code, _, err = cli(".", cwd=repo, capsys=capsys, monkeypatch=monkeypatch)
    assert code == 0, err
    assert "rewrote train.py" in err and "4 file(s) scanned" in err and "1 manual step(s) left" in err
    assert "manual.py:2:" in err and "MIGRATION.md#sft-chunked-nll" in err
    assert (repo / "manual.py").read_text().splitlines()[1].startswith("    # TODO(trl-compat): ")
    commit_all(repo)
    code, _, _ = cli(".", cwd=repo, capsys=capsys, monkeypatch=monkeypatch)
    assert code == 0 and git(repo, "status", "--porcelain") == ""  # a second run adds nothing


def test_report_json_and_sarif(repo, tmp_path, capsys, monkeypatch):
    (repo / "broken.py").write_text("x = 'chunked_nll'\ndef (:\n")
    commit_all(repo)
    code, _, _ = cli("--check", ".", "--report", str(tmp_path / "r.json"), cwd=repo, capsys=capsys, monkeypatch=monkeypatch)
    assert code == 2  # a failed file outranks "changes needed"
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["schema"] == "trl-compat/migrate-report/1" and data["mode"] == "check"
    assert data["totals"] == {"scanned": 5, "parsed": 4, "changed": 3, "unchanged": 1, "failed": 1, "written": 0,
                              "manual_steps": 1}
    files = {f["path"]: f for f in data["files"]}
    assert files["broken.py"]["errors"][0]["kind"] == "parse" and files["broken.py"]["errors"][0]["line"] == 2
    (manual,) = files["manual.py"]["findings"]
    assert manual["severity"] == "manual" and (manual["line"], manual["column"]) == (2, 22)
    assert manual["guide"] == "MIGRATION.md#sft-chunked-nll"
    assert manual["url"].startswith("https://") and manual["url"].endswith("MIGRATION.md#sft-chunked-nll")
    _, out, _ = cli("--check", ".", "--report", "-", "--format", "sarif", "-q", cwd=repo, capsys=capsys,
                    monkeypatch=monkeypatch)  # "would rewrite ..." lines, then the report
    sarif = json.loads(out[out.index("{") :])
    assert sarif["version"] == "2.1.0" and sarif["$schema"].endswith("sarif-2.1.0.json")
    run = sarif["runs"][0]
    rule_ids = {r["id"] for r in run["tool"]["driver"]["rules"]}
    assert {"sft-chunked-nll-loss-type", "trl-compat/error"} <= rule_ids
    levels = sorted((r["ruleId"], r["level"]) for r in run["results"])
    assert ("trl-compat/error", "error") in levels and ("sft-chunked-nll-loss-type", "warning") in levels
    region = next(r for r in run["results"] if r["level"] == "warning")["locations"][0]["physicalLocation"]
    assert region["artifactLocation"]["uri"] == "manual.py" and region["region"] == {"startLine": 2, "startColumn": 22}


def test_list_only_skip_and_usage_errors(repo, capsys, monkeypatch):
    def run(*args):
        return cli(*args, cwd=repo, capsys=capsys, monkeypatch=monkeypatch)

    code, out, _ = run("--list")
    assert code == 0
    line = next(x for x in out.splitlines() if x.startswith("sft-chunked-nll-loss-type"))
    assert " 1.15 " in line and "chunked_nll" in line
    code, _, err = run("--only", "no-such-rule", ".")
    assert code == 2 and "unknown migration id(s): no-such-rule" in err
    assert run("--skip", "nope", ".")[0] == 2
    assert run("--bogus-flag")[0] == 2
    assert run("--target-trl", "banana", ".")[0] == 2
    assert run("-j", "0", ".")[0] == 2
    code, out, _ = run("--check", ".", "--skip", "sft-chunked-nll-loss-type")
    assert "would rewrite train.py" not in out
    code, out, err = run("--check", ".", "--target-trl", "1.14")
    assert "would rewrite train.py" not in out and "target TRL 1.14" in err
    code, out, _ = run("--check", ".", "--only", "sft-chunked-nll-loss-type", "--target-trl", "1.14")
    assert "would rewrite train.py" in out  # --only names the rule: it runs whatever the target


def test_target_default_from_repo_pin(repo, capsys, monkeypatch):
    (repo / "requirements.txt").write_text("trl==1.14.0\n")
    _, out, err = cli("--check", ".", cwd=repo, capsys=capsys, monkeypatch=monkeypatch)
    assert "target TRL 1.14.0 (requirements.txt: trl==1.14.0)" in err
    assert "would rewrite train.py" not in out  # the 1.15 rule is not needed for 1.14
    (repo / "requirements.txt").write_text("trl==0.11.4\n")  # an old pin: the source, not the target
    _, out, err = cli("--check", ".", cwd=repo, capsys=capsys, monkeypatch=monkeypatch)
    assert "target TRL 1.16.0" in err and "would rewrite train.py" in out


@pytest.mark.slow
def test_dirty_tree_refused_with_advice(repo):
    (repo / "train.py").write_text(OLD_SFT + "# local edit\n")
    proc = run_cli(".", cwd=repo)
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert "train.py (modified)" in err and "--allow-dirty" in err and "commit or stash" in err
    assert "rewrote" not in err and "would change (nothing written)" in err  # never claims a refused write
    assert (repo / "train.py").read_text() == OLD_SFT + "# local edit\n"
    assert (repo / "manual.py").read_text().count("TODO") == 0  # nothing written anywhere
    assert main([str(repo), "--allow-dirty", "-q"]) == 0
    assert (repo / "train.py").read_text() == NEW_SFT + "# local edit\n"


@pytest.mark.slow
def test_quiet_and_no_progress_bar_when_piped(repo):
    proc = run_cli(".", "-q", cwd=repo)
    assert proc.returncode == 0 and proc.stderr == b"" and proc.stdout == b""


@pytest.mark.slow
def test_progress_bar_on_a_terminal(repo):
    pytest.importorskip("rich", reason="the progress bar is drawn with rich (the `dev` extra)")
    for i in range(3):
        (repo / f"extra{i}.py").write_text(OLD_SFT)
    master, slave = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(REPO), "TERM": "xterm", "COLUMNS": "120"}
    proc = subprocess.Popen([sys.executable, "-m", "compat.migrate", "--check", "."], cwd=repo, stdout=subprocess.PIPE,
                            stderr=slave, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=120)
    os.close(master)
    assert proc.returncode == 1
    assert b"migrating" in b"".join(chunks)


def test_main_is_callable_in_process(repo, capsys, monkeypatch):
    monkeypatch.chdir(repo)
    assert main(["--check", "train.py", "-q"]) == 1
    assert capsys.readouterr().out == "would rewrite train.py\n"
    assert main(["--help"]) == 0


def test_pre_commit_hook_definition():
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    (hook,) = [h for h in hooks if h["id"] == "trl-compat-migrate"]
    assert "--check" in hook["args"] or "--check" in hook["entry"]
    assert hook["language"] == "python"
    import re

    files = re.compile(hook["files"])
    for name in ("a/train.py", "nb.ipynb", "requirements-dev.txt", "pyproject.toml", "setup.cfg", "environment.yml"):
        assert files.search(name), name
    assert not files.search("README.md")


def test_every_spelling_of_a_target_migrates_alike(tmp_path, capsys, monkeypatch):
    # `--target-trl 1.16` once left the launcher and script-field rules idle: they looked the release "1.16" up in
    # the atlas, which spells it "1.16.0". A patch release (1.14.2) is looked up as itself.
    from tests.migrations.v1_13.test_ppo_cli_flags import LAUNCH, PPO_SCRIPT

    outputs = {}
    for spelling in ("1.16", "1.16.0", "1.14", "1.14.0"):
        repo = git_repo(tmp_path / spelling)
        (repo / "ppo.py").write_text(PPO_SCRIPT)
        (repo / "run.sh").write_text(LAUNCH)
        commit_all(repo)
        code, _, _ = cli(str(repo), "--target-trl", spelling, cwd=repo, capsys=capsys, monkeypatch=monkeypatch)
        assert code in (0, 1)
        outputs[spelling] = {p: (repo / p).read_text() for p in ("ppo.py", "run.sh")}
    assert outputs["1.16"] == outputs["1.16.0"] and outputs["1.14"] == outputs["1.14.0"]
    assert "--report_to=wandb" in outputs["1.16"]["run.sh"] and "TODO(trl-compat)" in outputs["1.16"]["run.sh"]


@pytest.mark.parametrize("module", ["compat.migrate", "compat.check"])
def test_an_exclude_pattern_git_cannot_use_is_a_usage_error(module, tmp_path):
    """`--exclude 'a\\'` (a trailing lone backslash): pathspec refuses it; both commands answer with argparse's usage
    error (exit 2) naming the pattern, not a traceback from the walk, and nothing is written."""
    (tmp_path / "t.py").write_text(OLD_SFT)
    out = subprocess.run([sys.executable, "-m", module, "--exclude", "a\\", str(tmp_path)], capture_output=True,
                         text=True, cwd=REPO)
    assert out.returncode == 2, out.stderr
    assert "argument --exclude: not a gitignore pattern: 'a\\\\'" in out.stderr and "Traceback" not in out.stderr
    assert (tmp_path / "t.py").read_text() == OLD_SFT
