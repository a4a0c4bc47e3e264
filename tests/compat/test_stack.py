"""The doctor's stack section (compat/stack.py): the requirements installed packages declare in their own metadata,
held against what is installed, on fake dist-infos (metadata only); the platform and torch facts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compat import __main__ as doctor
from compat.stack import declared_requirements, fix_command, platform_facts
from tests.compat._fakes import fake_env, write_dist_info

TRL_REQUIRES = ("huggingface_hub>=0.34.0", "pyarrow>=21.0.0", "accelerate>=1.10.1", 'requests; extra == "vllm"',
                'never-here>=1; python_version < "3.0"', "packaging")


def _env(tmp_path: Path, hub: str) -> str:
    root = tmp_path / "env"
    write_dist_info(root, "trl", "1.16.0", TRL_REQUIRES)
    fake_env(root, {"huggingface_hub": hub, "accelerate": "1.15.0", "torch": "2.13.0+cpu", "packaging": "24.0"})
    return str(root)


def test_declared_requirements_are_read_from_metadata_and_judged(tmp_path: Path) -> None:
    rows = {d.package: d for d in declared_requirements(path=[_env(tmp_path, "0.20.0")], roots=("trl",))}
    assert set(rows) == {"huggingface_hub", "pyarrow", "accelerate", "packaging"}  # extras and markers left out
    assert (rows["huggingface_hub"].status, rows["huggingface_hub"].installed) == ("error", "0.20.0")
    assert rows["pyarrow"].status == "missing" and rows["pyarrow"].installed is None
    assert rows["accelerate"].status == "ok" and rows["packaging"].required == "any"
    assert rows["huggingface_hub"].by == "trl 1.16.0"
    fix = fix_command(rows.values(), "2.13.0")
    assert fix == 'pip install "huggingface_hub>=0.34.0" "pyarrow>=21.0.0" "torch==2.13.0"'


def test_doctor_fails_on_a_declared_requirement_and_says_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.syspath_prepend(_env(tmp_path, "0.20.0"))
    assert doctor.main(["--no-torch"]) == 1
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("huggingface_hub "))
    # one row for the package, naming every declarer (the real transformers/peft of the test venv declare it too)
    assert row.split()[1] == "0.20.0" and row.split()[2].startswith(">=0.34.0") and row.split()[-1] == "error"
    assert "trl 1.16.0" in row
    assert "declared requirement(s) not met. Fix: pip install \"huggingface_hub>=0.34.0\"" in out
    assert "torch: 2.13.0+cpu, CUDA not checked" in out
    assert doctor.main(["--json", "--no-torch"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["platform"]["torch"] == "2.13.0+cpu" and data["platform"]["cuda"] == "not checked"
    assert {"package": "huggingface_hub", "installed": "0.20.0", "required": ">=0.34.0", "by": "trl 1.16.0",
            "status": "error"} in data["declared"]
    assert data["declared_fix_command"].startswith('pip install "huggingface_hub>=0.34.0"')


def test_platform_facts_without_torch_probe(tmp_path: Path) -> None:
    facts = platform_facts(path=[fake_env(tmp_path, {"torch": "2.13.0+cpu"})], probe_torch=False)
    assert facts["torch"] == "2.13.0+cpu" and facts["cuda"] == "not checked"
    assert facts["python"].split()[0] in ("CPython", "PyPy") and facts["machine"]
    assert platform_facts(path=[fake_env(tmp_path / "none", {})])["cuda"] == "no torch"


@pytest.mark.slow
def test_cuda_probe_runs_torch_in_a_child() -> None:
    pytest.importorskip("torch")
    import torch

    cuda = platform_facts()["cuda"]
    assert isinstance(cuda, dict) and cuda["cuda_available"] == torch.cuda.is_available()
