"""Two-process runs on CPU (gloo) through `accelerate launch` with the shipped configs.

DDP (`accelerate_configs/ddp_cpu.yaml`) must train SFT, DPO and GRPO with parameters identical across ranks after
the steps (gradients all-reduced although each rank saw different data). The GPU configs (ddp, fsdp2, zero2, zero3)
are checked for shape: they parse and name the distributed type they promise.

FSDP2 (`fsdp2_cpu.yaml`) and DeepSpeed ZeRO-2/3 (`zero2_cpu.yaml`, `zero3_cpu.yaml`): one launch each runs the
first step of SFT, DPO and GRPO on a tiny llama with an untied and a tied head (`_sharded_job.py`); the oracle is
the same job run here in one process with the doubled per-device batch (the same 4 samples). Checked: the head is
really sharded, loss and gradient norm equal the single-process run, and the chunked engine is handed the full
`[V, H]` head weight exactly once per forward and once per backward (an instrumented `chunking.gathered`).
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
from typing import Any

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "reference_impl" / "accelerate_configs"


def test_shipped_accelerate_configs_parse() -> None:
    yaml = pytest.importorskip("yaml")
    expected = {"ddp.yaml": "MULTI_GPU", "ddp_cpu.yaml": "MULTI_GPU", "fsdp2.yaml": "FSDP", "fsdp2_cpu.yaml": "FSDP",
                "zero2.yaml": "DEEPSPEED", "zero3.yaml": "DEEPSPEED", "zero2_cpu.yaml": "DEEPSPEED",
                "zero3_cpu.yaml": "DEEPSPEED"}
    for name, kind in expected.items():
        config = yaml.safe_load((CONFIGS / name).read_text())
        assert config["distributed_type"] == kind, name
    assert yaml.safe_load((CONFIGS / "fsdp2.yaml").read_text())["fsdp_config"]["fsdp_version"] == 2
    assert [yaml.safe_load((CONFIGS / n).read_text())["deepspeed_config"]["zero_stage"]
            for n in ("zero2.yaml", "zero3.yaml", "zero2_cpu.yaml", "zero3_cpu.yaml")] == [2, 3, 2, 3]
    for name in ("fsdp2_cpu.yaml", "zero2_cpu.yaml", "zero3_cpu.yaml"):
        config = yaml.safe_load((CONFIGS / name).read_text())
        assert config["num_processes"] == 2 and config["mixed_precision"] == "no", name
    assert yaml.safe_load((CONFIGS / "fsdp2_cpu.yaml").read_text())["fsdp_config"]["fsdp_version"] == 2


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


# ------------------------------------------------------------------------------------ FSDP2 and DeepSpeed on CPU
DEEPSPEED_ARGS = {"use_cpu": False, "ddp_backend": "gloo"}  # see the header of zero3_cpu.yaml


def _launch(tmp_path: pathlib.Path, config: str, extra_env: dict[str, str] | None = None) -> dict[str, Any]:
    out = tmp_path / f"{config}.json"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1",
           "TRL_EXPERIMENTAL_SILENCE": "1", "CI": "1", "PYTHONPATH": str(ROOT), **(extra_env or {})}
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--config_file", str(CONFIGS / config),
           "--main_process_port", str(29500 + (os.getpid() + len(config)) % 1000),
           str(ROOT / "tests" / "reference_impl" / "_sharded_job.py"), str(out)]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-6000:]
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def single_process() -> dict[str, Any]:
    """The oracle: every case in this process, no launcher, 4 samples per device (= 2 ranks x 2)."""
    from tests.reference_impl import _sharded_job as job

    return job.run_cases(per_device=4)


def _close(ours: float, oracle: float, tol: float) -> bool:
    return abs(ours - oracle) <= tol * max(1.0, abs(oracle))


def _check_common(results: dict[str, Any], oracle: dict[str, Any], kind: str) -> None:
    from tests.reference_impl._sharded_job import CASES, HIDDEN, VOCAB

    for name, head in CASES:
        case, ref = results[f"{name}/{head}"], oracle[f"{name}/{head}"]
        where = f"{kind} {name}/{head}"
        assert case["num_processes"] == 2 and case["distributed_type"].endswith(kind), (where, case)
        ranks = case["ranks"]
        assert len(ranks) == 2 and ranks[0]["samples"] != ranks[1]["samples"], (where, "ranks saw the same data")
        assert sorted(ranks[0]["samples"] + ranks[1]["samples"]) == sorted(ref["ranks"][0]["samples"]), where
        assert _close(case["loss"], ref["loss"], 1e-5), (where, case["loss"], ref["loss"])
        # the gradient norm in float64 (torch's logged one sums squares in fp32: ~2e-5 off over this head, see GradNorm)
        assert _close(case["grad_norm_fp64"], ref["grad_norm_fp64"], 1e-5), (where, case, ref)
        assert _close(case["grad_norm"], ref["grad_norm"], 1e-4), (where, case["grad_norm"], ref["grad_norm"])
        for rank in ranks:
            assert rank["head"]["tied"] is (head == "tied"), (where, rank["head"])
            calls = rank["calls"]
            # every engine call computes with the full head, never a shard
            assert all(c["shape"] == [VOCAB, HIDDEN] and c["type"] != "DTensor" for c in calls), (where, calls)
            # the policy's head: once in the forward, once in the backward (SFT's 3-GEMM path computes the gradients
            # in its forward: once); DPO's frozen reference: one forward
            policy = ["forward"] if name == "sft" else ["forward", "backward"]
            assert [c["phase"] for c in calls if c["requires_grad"]] == policy, (where, calls)
            frozen = [c["phase"] for c in calls if not c["requires_grad"]]
            assert frozen == (["forward"] if name == "dpo" else []), (where, calls)


@pytest.mark.slow
def test_fsdp2_two_cpu_processes_match_one_process(tmp_path, single_process) -> None:
    """`accelerate launch --config_file fsdp2_cpu.yaml`: FSDP2 (`fully_shard` over gloo) shards the head, and the
    first step equals the single-process run."""
    from tests.reference_impl._sharded_job import HIDDEN, VOCAB

    results = _launch(tmp_path, "fsdp2_cpu.yaml")
    _check_common(results, single_process, "FSDP")
    for key, case in results.items():
        for rank in case["ranks"]:
            head = rank["head"]
            assert head["type"] == "DTensor" and head["local_shape"] == [VOCAB // 2, HIDDEN], (key, head)
            assert head["model_class"].startswith("FSDP"), (key, head)


def _deepspeed_env() -> dict[str, str]:
    import shutil

    pytest.importorskip("deepspeed")
    if not (shutil.which("c++") or shutil.which("g++")):
        pytest.skip("DeepSpeed's CPU backend JIT-builds its shared-memory collective (deepspeed_shm_comm) in "
                    "init_distributed: no C++ compiler here")
    return {"DS_ACCELERATOR": "cpu", "SHARDED_JOB_ARGS": json.dumps(DEEPSPEED_ARGS)}


@pytest.mark.slow
def test_deepspeed_zero3_two_cpu_processes_match_one_process(tmp_path, single_process) -> None:
    """ZeRO-3 with `deepspeed.zero.Init`: the head is partitioned across the ranks, DeepSpeed's parameter getter
    gathers it inside the model's forward, and `zero3.gathered` gathers it where the engine is called outside one."""
    from tests.reference_impl._sharded_job import HIDDEN, VOCAB

    results = _launch(tmp_path, "zero3_cpu.yaml", _deepspeed_env())
    _check_common(results, single_process, "DEEPSPEED")
    for key, case in results.items():
        if "/" not in key:
            continue
        for rank in case["ranks"]:
            head = rank["head"]
            assert head["wrapper"] == "DeepSpeedEngine" and head["ds_shape"] == [VOCAB, HIDDEN], (key, head)
            assert head["ds_local_numel"] == VOCAB * HIDDEN // 2 and head["local_shape"] == [0], (key, head)
    gather = results["zero3_gathered"]
    assert gather["partitioned_before"], gather
    for mode, r in gather["modes"].items():
        assert [(c["phase"], c["partitioned"], c["shape"]) for c in r["calls"]] == [
            ("forward", True, [VOCAB, HIDDEN]), ("backward", True, [VOCAB, HIDDEN])], (mode, r["calls"])
        assert r["partitioned_after"] and r["logp_err"] < 1e-5 and r["dh_err"] < 1e-6, (mode, r)


@pytest.mark.slow
def test_deepspeed_zero2_two_cpu_processes_match_one_process(tmp_path, single_process) -> None:
    """ZeRO-2: parameters replicated (the full head on each rank), gradients and optimizer states sharded."""
    from tests.reference_impl._sharded_job import HIDDEN, VOCAB

    results = _launch(tmp_path, "zero2_cpu.yaml", _deepspeed_env())
    _check_common(results, single_process, "DEEPSPEED")
    assert results["zero3_gathered"] is None
    for key, case in results.items():
        if "/" not in key:
            continue
        for rank in case["ranks"]:
            assert rank["head"]["local_shape"] == [VOCAB, HIDDEN] and not rank["head"]["ds_shape"], (key, rank)


def test_cpu_fsdp_shim_is_inert_without_an_fsdp_launch(monkeypatch) -> None:
    """Outside an FSDP launch (`ACCELERATE_USE_FSDP` unset) the shim leaves accelerate untouched."""
    from accelerate.state import AcceleratorState

    from reference_impl.trainers._cpu_fsdp import cpu_fsdp_state

    monkeypatch.delenv("ACCELERATE_USE_FSDP", raising=False)
    before = AcceleratorState.__init__
    with cpu_fsdp_state():
        assert AcceleratorState.__init__ is before
    monkeypatch.setenv("ACCELERATE_USE_FSDP", "true")
    with cpu_fsdp_state():
        assert AcceleratorState.__init__ is not before
    assert AcceleratorState.__init__ is before
