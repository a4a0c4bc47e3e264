"""A migrated PPO-era script keeps its launcher: `accelerate launch --config_file <config> script.py` still trains.

The PPO-era pattern was `accelerate launch --config_file deepspeed_zero3.yaml ppo.py`. Here the bundled
`classic_gpt2_sentiment.py` is migrated with the CLI (as a user runs it) and launched, unedited, with
`accelerate launch --config_file reference_impl/accelerate_configs/fsdp2_cpu.yaml` on 2 CPU processes (gloo), in
smoke mode (tiny stand-ins for the hub models, datasets and pipeline; `compat.smoke`'s hook). Smoke mode normally
drops the launcher's environment (`compat.smoke.runner` runs one process); here a sitecustomize installs the hook in
each rank only, each rank reporting its own state file, so the launcher itself is the real one.

What accelerate makes of an FSDP launch on CPU processes: plain DDP (`MULTI_CPU`; accelerate 1.15 turns FSDP on only
for accelerator devices, see reference_impl/trainers/_cpu_fsdp.py). The test asserts that, so a change of behaviour
in accelerate shows up here. Needs TRL >= 1.13 (the migration target).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "ppo_era"
SCRIPT = "classic_gpt2_sentiment.py"

# Installed in every rank of the launch (RANK is set by torchrun), not in the `accelerate launch` process itself.
RANK_SITECUSTOMIZE = '''\
import atexit as _atexit
import importlib.util as _u
import json as _json
import os as _os
import sys as _sys

if "RANK" in _os.environ:
    _os.environ["TRL_COMPAT_SMOKE_STATE"] += ".rank" + _os.environ["RANK"]
    _os.environ.pop("TRL_COMPAT_SMOKE_OWNER", None)  # each rank owns (writes) its own state file
    _spec = _u.spec_from_file_location("_trl_compat_smoke_hook", _os.environ["TRL_COMPAT_SMOKE_HOOK"])
    _hook = _u.module_from_spec(_spec)
    _sys.modules[_spec.name] = _hook
    _spec.loader.exec_module(_hook)
    _hook.install()

    def _report_distributed():
        from accelerate.state import PartialState

        state = PartialState._shared_state
        with open(_os.environ["TRL_COMPAT_SMOKE_STATE"] + ".dist", "w") as fh:
            _json.dump({"distributed_type": str(state.get("distributed_type")),
                        "num_processes": state.get("num_processes")}, fh)

    _atexit.register(_report_distributed)
'''


@pytest.mark.slow  # not `trl`: one stack (make test) is enough for a launcher check; tox runs `trl` tests 3 times
def test_migrated_script_trains_under_accelerate_launch_fsdp2_cpu(tmp_path: Path) -> None:
    from compat.smoke import runner

    try:
        trl = Version(version("trl"))
    except PackageNotFoundError:
        pytest.skip("trl is not installed")
    if trl < Version("1.13"):
        pytest.skip(f"migrated scripts target TRL >= 1.13 (installed: {trl})")
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLES, repo)
    script = repo / SCRIPT
    proc = subprocess.run(
        [sys.executable, "-m", "compat.migrate", "--target-trl", str(trl), "--allow-dirty", "--allow-no-vcs", "-q", str(script)],
        capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PPOTrainer" not in script.read_text(encoding="utf-8")

    smoke_tmp = tmp_path / "smoke"
    hook_dir = smoke_tmp / "hook"
    hook_dir.mkdir(parents=True)
    (hook_dir / "sitecustomize.py").write_text(RANK_SITECUSTOMIZE, encoding="utf-8")
    state = smoke_tmp / "state.json"
    env = runner._child_env(str(smoke_tmp), str(hook_dir), str(state), str(script), 2, {"OMP_NUM_THREADS": "1"})
    env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], str(ROOT)])
    config = ROOT / "reference_impl" / "accelerate_configs" / "fsdp2_cpu.yaml"
    launch = [sys.executable, "-m", "accelerate.commands.launch", "--config_file", str(config),
              "--main_process_port", str(29500 + (os.getpid() + 7) % 1000), str(script)]
    proc = subprocess.run(launch, cwd=repo, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    for rank in (0, 1):
        result = json.loads(Path(f"{state}.rank{rank}").read_text(encoding="utf-8"))
        assert result["exception"] is None, (rank, result["exception"])
        assert result["steps"] == 2 and result["trainers"] == ["GRPOTrainer"], (rank, result)
        dist = json.loads(Path(f"{state}.rank{rank}.dist").read_text(encoding="utf-8"))
        assert dist == {"distributed_type": "DistributedType.MULTI_CPU", "num_processes": 2}, (rank, dist)
