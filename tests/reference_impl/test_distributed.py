"""Two-process runs on CPU (gloo) through `accelerate launch` with the shipped configs.

DDP (`accelerate_configs/ddp_cpu.yaml`) must train SFT, DPO and GRPO with parameters identical across ranks after
the steps (gradients all-reduced although each rank saw different data). The GPU configs (ddp, fsdp2, zero2, zero3)
are checked for shape: they parse and name the distributed type they promise.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "reference_impl" / "accelerate_configs"


def test_shipped_accelerate_configs_parse() -> None:
    yaml = pytest.importorskip("yaml")
    expected = {"ddp.yaml": "MULTI_GPU", "ddp_cpu.yaml": "MULTI_GPU", "fsdp2.yaml": "FSDP",
                "zero2.yaml": "DEEPSPEED", "zero3.yaml": "DEEPSPEED"}
    for name, kind in expected.items():
        config = yaml.safe_load((CONFIGS / name).read_text())
        assert config["distributed_type"] == kind, name
    assert yaml.safe_load((CONFIGS / "fsdp2.yaml").read_text())["fsdp_config"]["fsdp_version"] == 2
    assert [yaml.safe_load((CONFIGS / n).read_text())["deepspeed_config"]["zero_stage"]
            for n in ("zero2.yaml", "zero3.yaml")] == [2, 3]


@pytest.mark.slow
def test_ddp_two_cpu_processes(tmp_path) -> None:
    """`accelerate launch` with 2 gloo processes: SFT, DPO, GRPO train (with `import trl` blocked) and stay in sync
    across ranks."""
    out = tmp_path / "result.json"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1",
           "TRL_EXPERIMENTAL_SILENCE": "1", "CI": "1"}
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--config_file", str(CONFIGS / "ddp_cpu.yaml"),
           "--main_process_port", str(29500 + os.getpid() % 1000),
           str(ROOT / "tests" / "reference_impl" / "_distributed_job.py"), str(out), "ddp_cpu.yaml"]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    results = json.loads(out.read_text())["results"]
    for name, r in results.items():
        assert r["num_processes"] == 2 and "MULTI_CPU" in r["distributed_type"], (name, r)
        assert len(r["losses"]) == 2 and all(abs(x) < 1e6 for x in r["losses"]), (name, r)
        assert r["ranks_identical"] and r["moved"], (name, r)
        assert not r["trl_importable"], "the job must run with `import trl` blocked"
