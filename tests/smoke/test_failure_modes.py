"""Issue 15's failure modes, each on a script of the same shape as the real code that hit it: the run now reaches
training (stand-ins that follow the code), or fails with the right class and a stack (failures you can act on)."""

from __future__ import annotations

import json
import os
import stat
import sys
import textwrap
import time
from pathlib import Path

import pytest

from compat.smoke import run
from compat.smoke.analysis import analyse_source

FIXTURES = Path(__file__).parent / "fixtures"


def write(path: Path, body: str) -> Path:
    path.write_text(textwrap.dedent(body).lstrip(), encoding="utf-8")
    return path


# ------------------------------------------------------------------------------------ static reads (no child)
def test_analysis_finds_columns_structs_lists_and_markers() -> None:
    shape = analyse_source(textwrap.dedent('''
        import os
        TOKEN = os.environ["HF_TOKEN"]

        def fmt(example, cfg):
            head = example["meta"]["source"] + example["turns"][0]
            lr = cfg["learning_rate"]
            if "Assistant:" in example["dialogue"]:
                return example["dialogue"].split("### Response:")[1]
            return example["input_ids"], dataset["train"]
    '''))
    assert shape.columns == {"meta": {"source": "text"}, "turns": "list", "dialogue": "text"}
    assert shape.markers == ["Assistant:", "### Response:"]


def test_analysis_survives_code_that_does_not_parse() -> None:
    assert analyse_source("def broken(:\n").to_json() == {"columns": {}, "markers": []}


# ------------------------------------------------------------------------------------ failure classes (fast)
def test_missing_dependency_is_classed_as_such(tmp_path: Path) -> None:
    script = write(tmp_path / "train.py", "import flash_attn_that_is_not_installed\n")
    result = run(script)
    assert not result.passed and result.failure_class == "missing-dependency"
    assert "class: missing-dependency" in result.format()
    assert json.loads(json.dumps(result.to_dict()))["failure_class"] == "missing-dependency"


def test_a_missing_local_module_is_the_users_code(tmp_path: Path) -> None:
    (tmp_path / "utils").mkdir()
    script = write(tmp_path / "train.py", "from utils.data import build\n")
    assert run(script).failure_class == "user-code"


def test_an_error_in_the_users_code_is_classed_as_such(tmp_path: Path) -> None:
    script = write(tmp_path / "train.py", "values = {'lr': 1.0}\nprint(values['learning_rate'])\n")
    result = run(script)
    assert result.failure_class == "user-code" and result.line == 2


def test_a_blocked_network_call_is_a_smoke_limitation(tmp_path: Path) -> None:
    script = write(tmp_path / "train.py", """
        import socket
        socket.create_connection(("example.org", 443), timeout=5)
    """)
    assert run(script).failure_class == "smoke-limitation"


@pytest.mark.slow
def test_timeout_dumps_every_stack_kills_the_process_group_and_cleans_up(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    env_file = tmp_path / "env.json"
    script = write(tmp_path / "serve.py", f"""
        import json, os, subprocess, sys, threading, time

        def wait_for_server():
            while True:
                time.sleep(0.2)

        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
        open({str(pid_file)!r}, "w").write(str(child.pid))
        json.dump({{k: os.environ[k] for k in ("TORCH_EXTENSIONS_DIR", "TRL_COMPAT_SMOKE_TMP")}},
                  open({str(env_file)!r}, "w"))
        threading.Thread(target=time.sleep, args=(300,), daemon=True).start()
        wait_for_server()
    """)
    result = run(script, timeout=4)
    assert result.timed_out and result.status == "timeout" and result.error_type == "Timeout"
    assert result.file == str(script) and result.line == 5 and result.source_line == "time.sleep(0.2)"
    assert "Current thread" in (result.traceback or "") and result.traceback.count("Thread 0x") >= 1
    assert "serve.py:5" in (result.hint or "") and result.failure_class == "user-code"
    grandchild = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the script's own child process outlived the smoke run")
    env = json.loads(env_file.read_text())
    assert env["TORCH_EXTENSIONS_DIR"].startswith(env["TRL_COMPAT_SMOKE_TMP"])  # JIT builds and locks die with the run
    assert not os.path.exists(env["TRL_COMPAT_SMOKE_TMP"])


def _wrapper(path: Path, marker: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\necho used > "{marker}"\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def test_python_option_runs_the_script_under_another_interpreter(tmp_path: Path) -> None:
    marker = tmp_path / "used"
    python = _wrapper(tmp_path / "env" / "bin" / "python", marker)
    script = write(tmp_path / "train.py", "print('hello from', __name__)\n")
    result = run(script, python=python, min_steps=0)
    assert result.passed and marker.exists() and result.python == str(python)
    assert any("--python" in n for n in result.notices)


def test_an_active_virtualenv_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "used"
    _wrapper(tmp_path / "venv" / "bin" / "python", marker)
    monkeypatch.setenv("VIRTUAL_ENV", str(tmp_path / "venv"))
    script = write(tmp_path / "train.py", "print('hi')\n")
    result = run(script, min_steps=0)
    assert result.passed and marker.exists()
    assert any("$VIRTUAL_ENV" in n for n in result.notices)


# --------------------------------------------------------------------- stand-ins that follow the code (training)
@pytest.mark.slow
@pytest.mark.trl
@pytest.mark.parametrize("fixture, expected_notice", [
    ("sized_for_real_data.py", "grown from"),
    ("reads_custom_columns.py", "synthetic"),
    ("modelscope_loaders.py", "modelscope"),
    ("local_model_dir.py", "models/Qwen3-4B-Instruct-2507"),
])
def test_scripts_shaped_like_real_data_reach_training(tmp_path: Path, fixture: str, expected_notice: str) -> None:
    pytest.importorskip("trl")
    result = run(FIXTURES / fixture, cwd=tmp_path)
    assert result.passed, result.format(verbose=True) + "\n" + result.output_tail
    assert result.steps == 2 and result.failure_class is None
    assert any(expected_notice in n for n in result.notices), result.notices
    assert list(tmp_path.iterdir()) == []


def test_analysis_follows_the_scripts_own_imports_only(tmp_path: Path) -> None:
    from compat.smoke.analysis import analyse_script

    (tmp_path / "data").mkdir()
    write(tmp_path / "data" / "__init__.py", "")
    write(tmp_path / "data" / "prep.py", "def fmt(ex):\n    return ex['dialogue'].split('### Response:')\n")
    write(tmp_path / "other_script.py", "def f(ex):\n    return ex['unrelated']\n")
    script = write(tmp_path / "train.py", "from data.prep import fmt\nimport os\n")
    shape = analyse_script(str(script))
    assert shape.columns == {"dialogue": "text"} and shape.markers == ["### Response:"]


@pytest.mark.slow
@pytest.mark.trl
@pytest.mark.parametrize("broken", [False, True])
def test_learn_mode_tells_a_configuration_that_learns_from_one_that_cannot(tmp_path: Path, broken: bool) -> None:
    pytest.importorskip("trl")
    result = run(FIXTURES / "grpo_learning.py", ["--broken"] if broken else [], cwd=tmp_path, learn=16)
    assert result.passed and result.steps == 16, result.format(verbose=True) + result.output_tail
    learning = result.learning
    assert learning is not None and learning["trainer"] == "GRPOTrainer" and learning["steps"] == 16
    if broken:
        assert result.learned is False and result.status == "not-learning"
        assert learning["user_reward_zero_std_share"] == 1.0 and "CANNOT learn" in learning["verdict"]
        assert "does it read the completions?" in learning["verdict"]
        assert learning["identical_completions_share"] >= 0.5 and "all alike" in learning["verdict"]
    else:
        assert result.learned is True and result.status == "passed"
        assert learning["reward_end"] - learning["reward_start"] >= 0.15
        assert learning["user_reward_zero_std_share"] < 0.5


def test_learning_verdict_needs_a_rise_different_completions_and_a_reward_that_reads_them() -> None:
    from compat.smoke.runner import learning_report

    rising = [0.45, 0.5, 0.48, 0.52, 0.6, 0.7, 0.75, 0.8, 0.85]
    good = learning_report({"trainer": "GRPOTrainer", "rewards": rising, "user_zero_std": [0.1, 0.0],
                            "known_zero_std": [0.0]})
    assert good["learns"] and good["rose"] and "learns" in good["verdict"]
    assert abs(good["reward_start"] - (0.45 + 0.5 + 0.48) / 3) < 1e-12
    flat = learning_report({"rewards": [0.5] * 9, "user_zero_std": [0.0], "known_zero_std": [0.0]})
    assert not flat["learns"] and not flat["rose"] and "did not rise" in flat["verdict"]
    alike = learning_report({"rewards": rising, "user_zero_std": [0.0], "known_zero_std": [0.9, 1.0]})
    assert alike["rose"] and not alike["learns"] and "all alike in 95%" in alike["verdict"]
    blind = learning_report({"rewards": rising, "user_zero_std": [1.0], "known_zero_std": [0.0]})
    assert not blind["learns"] and "does it read the completions?" in blind["verdict"]
    assert "not checked" in learning_report({"rewards": [0.5]})["verdict"]
