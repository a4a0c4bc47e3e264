"""The smoke runner's contract, on small scripts written here: pass/fail, the user's file and line, timeouts, the
offline network, the launcher environment, the CLI. The child processes here import no torch (under ~2 s each)."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

from compat.smoke import SmokeResult, run
from compat.smoke.cli import main


def write(path: Path, body: str) -> Path:
    path.write_text(textwrap.dedent(body).lstrip(), encoding="utf-8")
    return path


def test_script_that_never_trains_fails_with_a_hint(tmp_path: Path) -> None:
    script = write(tmp_path / "prep.py", "print('only data prep')\n")
    result = run(script)
    assert isinstance(result, SmokeResult)
    assert not result.passed and result.returncode == 0 and result.steps == 0
    assert result.status == "failed"
    assert "without completing a training step" in (result.hint or "")
    assert "only data prep" in result.output_tail
    # the same script passes when training is not required
    assert run(script, min_steps=0).passed


def test_exception_in_a_helper_module_points_at_the_helper(tmp_path: Path) -> None:
    write(tmp_path / "helpers.py", """
        def build():
            values = {"lr": 1.0}
            return values["learning_rate"]
    """)
    script = write(tmp_path / "train.py", """
        from helpers import build

        config = build()
    """)
    result = run(script)
    assert not result.passed and result.returncode == 1
    assert result.error_type == "KeyError" and "learning_rate" in (result.error_message or "")
    assert result.file == str(tmp_path / "helpers.py") and result.line == 3
    assert result.source_line == 'return values["learning_rate"]'
    assert "helpers.py:3" in result.format()


def test_syntax_error_is_located(tmp_path: Path) -> None:
    script = write(tmp_path / "broken.py", "x = 1\nif x\n    pass\n")
    result = run(script)
    assert not result.passed and result.error_type == "SyntaxError"
    assert result.file == str(script) and result.line == 2


def test_network_attempts_fail_fast_with_a_clear_message(tmp_path: Path) -> None:
    script = write(tmp_path / "fetch.py", """
        import socket

        socket.create_connection(("example.org", 80), timeout=30)
    """)
    result = run(script, timeout=60)
    assert not result.passed and not result.timed_out
    assert result.error_type == "SmokeNetworkBlocked"
    assert "network access to example.org:80 blocked" in (result.error_message or "")
    assert result.network_blocked == ["example.org:80"]
    assert result.line == 3 and "network" in (result.hint or "")


def test_offline_environment_and_single_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # what `accelerate launch` / `torchrun` leave in the environment must not reach the child
    for name, value in {"RANK": "3", "WORLD_SIZE": "8", "LOCAL_RANK": "3", "MASTER_ADDR": "10.0.0.1",
                        "ACCELERATE_MIXED_PRECISION": "bf16"}.items():
        monkeypatch.setenv(name, value)
    script = write(tmp_path / "env.py", """
        import json, os, sys
        keys = ["RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "ACCELERATE_MIXED_PRECISION", "HF_HUB_OFFLINE",
                "TRL_COMPAT_SMOKE", "CUDA_VISIBLE_DEVICES"]
        print("ENV=" + json.dumps({k: os.environ.get(k) for k in keys}))
        print("ARGV=" + json.dumps(sys.argv[1:]))
        print("NAME=" + __name__)
    """)
    result = run(script, ["--learning_rate", "3e-6", "--flag"], min_steps=0)
    assert result.passed, result.format(verbose=True)
    lines = dict(line.split("=", 1) for line in result.output_tail.splitlines() if line[:4] in ("ENV=", "ARGV", "NAME"))
    env = json.loads(lines["ENV"])
    assert env["RANK"] is None and env["WORLD_SIZE"] is None and env["LOCAL_RANK"] is None
    assert env["MASTER_ADDR"] is None and env["ACCELERATE_MIXED_PRECISION"] is None
    assert env["HF_HUB_OFFLINE"] == "1" and env["TRL_COMPAT_SMOKE"] == "1" and env["CUDA_VISIBLE_DEVICES"] == ""
    assert json.loads(lines["ARGV"]) == ["--learning_rate", "3e-6", "--flag"]
    assert lines["NAME"] == "__main__"


@pytest.mark.slow
def test_timeout_kills_the_run(tmp_path: Path) -> None:
    script = write(tmp_path / "hang.py", "import time\ntime.sleep(120)\n")
    result = run(script, timeout=3)
    assert result.timed_out and not result.passed and result.status == "timeout"
    assert "timeout" in (result.hint or "")


def test_hook_lives_outside_the_user_repo_and_chains_an_existing_sitecustomize(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user_site = tmp_path / "site"
    user_site.mkdir()
    write(user_site / "sitecustomize.py", "import os\nos.environ['USER_SITECUSTOMIZE_RAN'] = '1'\n")
    monkeypatch.setenv("PYTHONPATH", str(user_site))
    repo = tmp_path / "repo"
    repo.mkdir()
    script = write(repo / "check.py", """
        import os, sys
        assert "_trl_compat_smoke_hook" in sys.modules, "smoke hook not installed"
        assert os.environ.get("USER_SITECUSTOMIZE_RAN") == "1", "the user's sitecustomize did not run"
        hook_dir = os.path.dirname(sys.modules["sitecustomize"].__file__)
        assert not hook_dir.startswith(os.path.dirname(os.path.abspath(__file__))), hook_dir
        print("HOOK_DIR=" + hook_dir)
    """)
    before = sorted(p.name for p in repo.iterdir())
    result = run(script, min_steps=0, cwd=repo)
    assert result.passed, result.format(verbose=True)
    assert sorted(p.name for p in repo.iterdir()) == before  # nothing written into the user's repo
    hook_dir = next(line.split("=", 1)[1] for line in result.output_tail.splitlines() if line.startswith("HOOK_DIR="))
    assert not os.path.exists(hook_dir)  # the temp dir is gone after the run


def test_missing_script(tmp_path: Path) -> None:
    result = run(tmp_path / "nope.py")
    assert not result.passed and result.error_type == "FileNotFoundError"


def test_cli_json_exit_codes_and_script_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ok = write(tmp_path / "ok.py", "import sys\nprint('ARGS', sys.argv[1:])\n")
    assert main(["--json", "--min-steps", "0", str(ok), "--", "--epochs", "3"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["passed"] is True and data["status"] == "passed" and data["steps"] == 0
    assert "ARGS ['--epochs', '3']" in data["output_tail"]
    assert data["command"][0] == sys.executable and data["command"][-2:] == ["--epochs", "3"]

    bad = write(tmp_path / "bad.py", "raise RuntimeError('boom')\n")
    assert main(["-q", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "FAILED" in out and "bad.py:1" in out and "RuntimeError: boom" in out

    assert main([]) == 2  # usage error
