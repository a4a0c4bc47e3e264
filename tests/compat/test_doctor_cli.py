"""The doctor (``python -m compat``) and the ``trl-compat`` dispatcher, in-process.

Fake dist-infos (metadata only) go first on ``sys.path`` via ``monkeypatch.syspath_prepend``; they shadow the test
venv's real packages for the metadata lookups the doctor makes.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
from pathlib import Path

import pytest

from compat import __version__, check_environment
from compat import __main__ as doctor
from compat import cli
from tests.compat._fakes import fake_env

DECLARED_VIOLATING = os.environ.get("TRL_COMPAT_CHECK", "").strip().lower() in ("warn", "off")


@pytest.fixture
def violating(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(fake_env(tmp_path / "fakes", {"peft": "0.12.0", "deepspeed": "0.18.5"}))


@pytest.mark.skipif(DECLARED_VIOLATING, reason="this tox env declares itself violating (TRL_COMPAT_CHECK=warn/off)")
def test_real_environment_passes(capsys: pytest.CaptureFixture[str]) -> None:
    report = check_environment()
    assert report.ok, [f for f in report.errors]
    assert doctor.main([]) == 0
    out = capsys.readouterr().out
    assert "OK: no violations" in out
    if report.trl_version:
        assert f"trl {report.trl_version}" in out and f"floors of TRL {report.profile}" in out


def test_table_has_every_column_and_row(violating: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert doctor.main(["--no-torch"]) == 1
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("package"))
    assert header.split() == ["package", "installed", "required", "status", "why"]
    peft_row = next(line for line in out.splitlines() if line.startswith("peft "))
    assert peft_row.split()[:4] == ["peft", "0.12.0", ">=0.13.0", "error"]
    assert "fails >=0.13.0" in peft_row and "TRL 1.13 raised" in peft_row
    assert "2 violation(s)" in out and 'pip install "peft>=0.13.0" "deepspeed>=0.18.6"' in out
    for package in ("python", "trl", "transformers", "accelerate", "datasets", "vllm", "liger-kernel"):
        assert any(line.startswith(package + " ") for line in out.splitlines()), package


def test_json_matches_the_report(violating: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert doctor.main(["--json", "--no-torch"]) == 1
    data = json.loads(capsys.readouterr().out)
    floors = json.loads(json.dumps(check_environment().as_dict()))
    assert {k: data[k] for k in floors} == floors and {"platform", "declared"} <= set(data)
    assert {"package", "installed", "required", "status", "detail", "why"} == set(data["findings"][0])
    assert data["fix_command"].startswith("pip install ")


def test_warnings_alone_exit_zero(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.syspath_prepend(fake_env(tmp_path, {"vllm": "0.99.0"}))
    if not check_environment().ok:
        pytest.skip("the real environment of this tox env already violates the floors")
    assert doctor.main(["--no-torch"]) == 0
    assert "above the supported window" in capsys.readouterr().out


def test_cli_dispatches_to_the_doctor(violating: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["doctor", "--json", "--no-torch"]) == 1
    assert json.loads(capsys.readouterr().out)["ok"] is False


def test_cli_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == 2
    assert cli.main(["--help"]) == 0
    assert "doctor" in capsys.readouterr().out
    assert cli.main(["frobnicate"]) == 2
    assert "unknown subcommand 'frobnicate'" in capsys.readouterr().err
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"trl-compat {__version__}"


def test_cli_loads_subcommands_lazily(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert cli._load("compat.__main__") is doctor.main
    assert cli._load("compat.no_such_tool.cli") is None  # not part of this installation
    # a tool whose own import fails on a missing dependency is a real error, not "subcommand absent"
    (tmp_path / "tool_with_missing_dep.py").write_text("import surely_missing_dependency_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError, match="surely_missing_dependency_xyz"):
        cli._load("tool_with_missing_dep")


@pytest.mark.parametrize("name", ["migrate", "smoke"])
def test_cli_forwards_argv(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    module = cli.SUBCOMMANDS[name][0]
    try:
        present = importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        present = False
    if not present:
        assert cli.main([name, "--help"]) == 2
        assert "not available" in capsys.readouterr().err
        return
    assert cli.main([name, "--help"]) == 0  # the subcommand's own --help, reached through the dispatcher
    out = capsys.readouterr().out
    assert "usage" in out.lower()
    if "prog" in inspect.signature(cli._load(module)).parameters:
        assert f"usage: trl-compat {name}" in out
