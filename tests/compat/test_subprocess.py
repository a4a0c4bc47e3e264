"""``import compat`` and compat's tools in fresh interpreters, with fake dist-infos first on PYTHONPATH.

The fakes are metadata only (a ``*.dist-info/METADATA`` with Name and Version; no package code): they shadow the real
peft/deepspeed of the test venv for ``importlib.metadata``-style lookups, which is all compat reads.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.compat._fakes import fake_env, run_python

HEAVY = ("torch", "transformers", "trl", "peft", "deepspeed", "vllm", "accelerate", "datasets", "liger_kernel")
ACCEPTANCE = {"peft": "0.12.0", "deepspeed": "0.18.5"}  # the "done when" scenario


@pytest.fixture
def violating(tmp_path: Path) -> str:
    return fake_env(tmp_path / "fakes", ACCEPTANCE)


def test_import_compat_imports_none_of_the_checked_packages(tmp_path: Path) -> None:
    code = f"import sys, compat; print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    result = run_python(["-c", code], env={"TRL_COMPAT_CHECK": "warn"}, cwd=str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_violations_raise_one_error_naming_both(violating: str, tmp_path: Path) -> None:
    result = run_python(["-c", "import compat"], fakes=violating, cwd=str(tmp_path))
    assert result.returncode == 1
    err = result.stderr
    assert err.count("compat.errors.IncompatibleEnvironmentError:") == 1  # one exception, every violation in it
    for text in ("peft 0.12.0", "required >=0.13.0", "deepspeed 0.18.5", "required >=0.18.6", "TRL_COMPAT_CHECK"):
        assert text in err, text
    pip_lines = [line for line in err.splitlines() if "pip install" in line]
    assert len(pip_lines) == 1
    assert '"peft>=0.13.0"' in pip_lines[0] and '"deepspeed>=0.18.6"' in pip_lines[0]


def test_warn_mode_imports_with_a_warning(violating: str, tmp_path: Path) -> None:
    result = run_python(["-c", "import compat; print('imported')"], fakes=violating, env={"TRL_COMPAT_CHECK": "warn"},
                        cwd=str(tmp_path))
    assert result.returncode == 0 and result.stdout.strip() == "imported"
    assert "IncompatibleEnvironmentWarning" in result.stderr and "peft 0.12.0" in result.stderr


def test_off_mode_is_silent(violating: str, tmp_path: Path) -> None:
    result = run_python(["-c", "import compat; print('imported')"], fakes=violating, env={"TRL_COMPAT_CHECK": "off"},
                        cwd=str(tmp_path))
    assert result.returncode == 0 and result.stdout.strip() == "imported" and result.stderr == ""


def test_doctor_runs_in_a_violating_environment(violating: str, tmp_path: Path) -> None:
    table = run_python(["-m", "compat"], fakes=violating, cwd=str(tmp_path))
    assert table.returncode == 1, table.stderr
    assert "IncompatibleEnvironment" not in table.stderr  # the doctor is silent on import and prints the table
    assert "peft" in table.stdout and "0.12.0" in table.stdout and 'pip install "peft>=0.13.0"' in table.stdout
    as_json = run_python(["-m", "compat", "--json"], fakes=violating, cwd=str(tmp_path))
    assert as_json.returncode == 1
    data = json.loads(as_json.stdout)
    assert data["ok"] is False
    assert sorted(f["package"] for f in data["findings"] if f["status"] == "error") == ["deepspeed", "peft"]


@pytest.mark.parametrize("module", ["compat.migrate", "compat.smoke", "compat.demo", "compat.check"])
def test_other_tools_are_never_blocked(violating: str, tmp_path: Path, module: str) -> None:
    # Whether or not the tool's module exists yet, `compat` itself is imported first (runpy imports the parent
    # package): it must warn, not raise.
    result = run_python(["-m", module, "--help"], fakes=violating, cwd=str(tmp_path))
    assert "IncompatibleEnvironmentError" not in result.stderr
    assert f"`python -m {module}` runs anyway" in result.stderr
    assert "peft 0.12.0" in result.stderr


@pytest.mark.slow
def test_spawned_worker_of_a_tool_is_not_blocked(violating: str, tmp_path: Path) -> None:
    # A real spawn-context ProcessPoolExecutor started from a tool process: the worker re-imports compat with
    # `python -c "from multiprocessing.spawn ..."` as its argv and must inherit the tool run (TRL_COMPAT_TOOL).
    code = (
        "import sys\n"
        "sys.orig_argv[1:] = ['-m', 'compat.migrate']  # what `python -m compat.migrate` shows\n"
        "import compat\n"
        "from concurrent.futures import ProcessPoolExecutor\n"
        "import multiprocessing as mp\n"
        "with ProcessPoolExecutor(1, mp_context=mp.get_context('spawn')) as pool:\n"
        "    print(pool.submit(compat.environment.normalize_name, 'A-b').result())  # the worker imports compat\n"
    )
    result = run_python(["-c", code], fakes=violating, cwd=str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "a_b"
    assert "IncompatibleEnvironmentError" not in result.stderr


def test_console_script_runs_in_a_violating_environment(violating: str, tmp_path: Path) -> None:
    script = shutil.which("trl-compat", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("the trl-compat console script is not installed in this environment")
    result = run_python([script, "doctor", "--json"], fakes=violating, cwd=str(tmp_path))
    assert result.returncode == 1, result.stderr
    assert "IncompatibleEnvironmentError" not in result.stderr
    assert json.loads(result.stdout)["ok"] is False
