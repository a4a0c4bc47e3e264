"""``TRL_COMPAT_CHECK`` modes, the single error listing every violation, and how compat's own tools are recognised.

In-process: the fake dist-infos (metadata only) go first on ``sys.path`` through ``monkeypatch.syspath_prepend`` and
shadow the real packages of the test environment; ``_enforce_at_import`` is what ``import compat`` runs.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from compat import (
    IncompatibleEnvironmentError,
    IncompatibleEnvironmentWarning,
    _check_mode,
    _enforce_at_import,
    _tool_invocation,
)
from tests.compat._fakes import fake_env

PY = "/venv/bin/python"
VIOLATING = {"peft": "0.12.0", "deepspeed": "0.18.5"}


@pytest.fixture
def violating(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(fake_env(tmp_path / "fakes", VIOLATING))


def test_mode_parsing() -> None:
    assert _check_mode({}) == ("error", None)
    assert _check_mode({"TRL_COMPAT_CHECK": "WARN "}) == ("warn", None)
    assert _check_mode({"TRL_COMPAT_CHECK": "off"}) == ("off", None)
    mode, complaint = _check_mode({"TRL_COMPAT_CHECK": "loud"})
    assert mode == "error" and "TRL_COMPAT_CHECK='loud'" in complaint


def test_error_mode_raises_one_error_naming_every_violation(violating: None) -> None:
    with pytest.raises(IncompatibleEnvironmentError) as info:
        _enforce_at_import(orig_argv=[PY, "-c", "import compat"], environ={})
    err = info.value
    assert isinstance(err, ImportError)
    message = str(err)
    for text in ("peft 0.12.0", ">=0.13.0", "deepspeed 0.18.5", ">=0.18.6", "TRL_COMPAT_CHECK", "2 problems"):
        assert text in message, text
    pip_lines = [line for line in message.splitlines() if "pip install" in line]
    assert len(pip_lines) == 1 and '"peft>=0.13.0"' in pip_lines[0] and '"deepspeed>=0.18.6"' in pip_lines[0]
    assert sorted(f.package for f in err.report.errors) == ["deepspeed", "peft"]


def test_warn_mode_only_warns(violating: None) -> None:
    with pytest.warns(IncompatibleEnvironmentWarning) as record:
        _enforce_at_import(orig_argv=[PY, "-c", "import compat"], environ={"TRL_COMPAT_CHECK": "warn"})
    (warning,) = record
    assert "peft 0.12.0" in str(warning.message) and "TRL_COMPAT_CHECK=warn" in str(warning.message)


def test_off_mode_is_silent(violating: None) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _enforce_at_import(orig_argv=[PY, "-c", "import compat"], environ={"TRL_COMPAT_CHECK": "off"})


def test_unknown_mode_complains_and_still_raises(violating: None) -> None:
    with pytest.warns(IncompatibleEnvironmentWarning, match="not one of"), pytest.raises(IncompatibleEnvironmentError):
        _enforce_at_import(orig_argv=[PY, "-c", "import compat"], environ={"TRL_COMPAT_CHECK": "loud"})


def test_only_warnings_never_raise(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(fake_env(tmp_path, {"vllm": "0.99.0"}))
    with pytest.warns(IncompatibleEnvironmentWarning, match="above the supported window"):
        _enforce_at_import(orig_argv=[PY, "-c", "import compat"], environ={})


@pytest.mark.parametrize(
    ("argv", "tool"),
    [
        ([PY, "-m", "compat"], "python -m compat"),
        ([PY, "-m", "compat", "--json"], "python -m compat"),
        ([PY, "-X", "importtime", "-m", "compat.migrate", "src/"], "python -m compat.migrate"),
        ([PY, "-mcompat.smoke"], "python -m compat.smoke"),
        ([PY, "-I", "-m", "compat.migrate.cli", "--diff"], "python -m compat.migrate.cli"),
        ([PY, "-m", "compat.demo"], "python -m compat.demo"),
        ([PY, "-m", "compat.check", "."], "python -m compat.check"),
        ([PY, "-m", "compat.cli", "doctor"], "python -m compat.cli"),
        ([PY, "/venv/bin/trl-compat", "migrate", "x.py"], "trl-compat migrate"),
        ([PY, "/venv/bin/trl-compat", "--json", "doctor"], "trl-compat doctor"),
        (["C:\\py\\python.exe", "C:\\venv\\Scripts\\trl-compat-script.py", "doctor"], "trl-compat doctor"),
        ([PY, "-m", "pytest", "tests"], None),
        ([PY, "-m", "compatible"], None),
        ([PY, "-m", "compat_other.tool"], None),
        ([PY, "-c", "import compat", "-m", "compat"], None),
        ([PY, "train.py", "-m", "compat"], None),
        ([PY], None),
        ([PY, "-"], None),
    ],
)
def test_tool_invocation(argv: list[str], tool: str | None) -> None:
    assert _tool_invocation(argv) == tool


def test_tools_warn_instead_of_raising_and_export_the_run(violating: None) -> None:
    exported: dict[str, str] = {}
    with pytest.warns(IncompatibleEnvironmentWarning, match="`python -m compat.migrate` runs anyway"):
        _enforce_at_import(orig_argv=[PY, "-m", "compat.migrate", "src"], environ={}, export=exported)
    assert exported == {"TRL_COMPAT_TOOL": "python -m compat.migrate"}


def test_processes_started_by_a_tool_inherit_it(violating: None) -> None:
    # e.g. a spawned ProcessPoolExecutor worker of the migrator: its own argv is `python -c "from multiprocessing..."`
    worker = [PY, "-c", "from multiprocessing.spawn import spawn_main; spawn_main()", "--multiprocessing-fork"]
    with pytest.warns(IncompatibleEnvironmentWarning, match="runs anyway"):
        _enforce_at_import(orig_argv=worker, environ={"TRL_COMPAT_TOOL": "python -m compat.migrate"}, export={})
    with pytest.raises(IncompatibleEnvironmentError):
        _enforce_at_import(orig_argv=worker, environ={}, export={})


def test_doctor_stays_silent_on_import(violating: None) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _enforce_at_import(orig_argv=[PY, "-m", "compat"], environ={}, export={})
        _enforce_at_import(orig_argv=[PY, "/venv/bin/trl-compat", "doctor"], environ={}, export={})


def test_python_violation_is_named_outside_the_pip_line(tmp_path: Path) -> None:
    from compat.environment import check_environment
    from compat.errors import format_report

    report = check_environment(path=[fake_env(tmp_path, {"trl": "1.16.0", "transformers": "5.24.0",
                                                         "accelerate": "1.15.0", "datasets": "5.2.0",
                                                         "peft": "0.12.0"})], python_version="3.10.14")
    message = format_report(report)
    assert [f.package for f in report.errors] == ["python", "peft"]
    assert 'pip install "peft>=0.13.0"' in message and "python>=" not in report.fix_command
    assert "Use a Python interpreter that satisfies >=3.11 (pip cannot fix that)." in message
