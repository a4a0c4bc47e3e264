"""The bundled PPO-era example repository (examples/ppo_era/), end to end.

* Migrated with `python -m compat.migrate` (the CLI, as a user runs it) for the installed TRL, each script is smoke-run
  (`compat.smoke.run`) for 2 real training steps, with NO edits after migration. Needs TRL >= 1.13 (the target).
* The originals are smoke-run against the TRL of their era where the environment has one (`# runs-on:` header; the
  tox `ppo` env has trl==1.12.0 for the `trl.experimental.ppo` scripts); skipped elsewhere.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from compat.smoke import run

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "ppo_era"
SCRIPTS = sorted(p.name for p in EXAMPLES.glob("*.py"))
PPO_NAMES = re.compile(r"\b(PPOTrainer|PPOConfig|PPOv2Trainer|PPOv2Config|AutoModelForCausalLMWithValueHead|"
                       r"trl\.experimental\.ppo|trl\.core)\b")


def installed_trl() -> Version | None:
    try:
        return Version(version("trl"))
    except PackageNotFoundError:
        return None


def header(script: str, key: str) -> str:
    match = re.search(rf"^# {key}: (.+)$", (EXAMPLES / script).read_text(encoding="utf-8"), re.MULTILINE)
    assert match, f"{script} lacks its '# {key}:' header"
    return match.group(1).strip()


def test_the_bundle_has_two_complete_scripts_per_era() -> None:
    eras: dict[str, list[str]] = {}
    for script in SCRIPTS:
        source = (EXAMPLES / script).read_text(encoding="utf-8")
        ast.parse(source)  # complete, valid Python
        assert PPO_NAMES.search(source), f"{script} uses no PPO-era API"
        SpecifierSet(header(script, "runs-on").removeprefix("trl"))
        eras.setdefault(header(script, "era").split()[0], []).append(script)
    assert sorted(eras) == ["1", "2", "3"] and all(len(v) >= 2 for v in eras.values()), eras
    pins = (EXAMPLES / "requirements.txt").read_text(encoding="utf-8")
    assert re.search(r"^trl==0\.", pins, re.MULTILINE), "requirements.txt must pin the old trl"


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One migration of a copy of the whole bundle per test process, through the CLI."""
    trl = installed_trl()
    if trl is None or trl < Version("1.13"):
        pytest.skip(f"migrated scripts target TRL >= 1.13 (installed: {trl})")
    repo = tmp_path_factory.mktemp("ppo_era") / "repo"
    shutil.copytree(EXAMPLES, repo)
    proc = subprocess.run(
        [sys.executable, "-m", "compat.migrate", "--target-trl", str(trl), "--allow-dirty", "--allow-no-vcs", "-q", str(repo)],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"trl=={trl}" in (repo / "requirements.txt").read_text(encoding="utf-8")
    return repo


@pytest.mark.slow
@pytest.mark.trl
@pytest.mark.parametrize("script", SCRIPTS)
def test_migrated_example_trains_untouched(migrated: Path, script: str) -> None:
    source = (migrated / script).read_text(encoding="utf-8")
    assert source != (EXAMPLES / script).read_text(encoding="utf-8"), "the migrator left the script unchanged"
    assert not re.search(r"^\s*(from trl\S* import .*\bPPO|import trl\.experimental\.ppo)", source, re.MULTILINE)
    result = run(migrated / script, cwd=migrated, timeout=600)
    assert result.passed, result.format(verbose=True) + "\n--- output ---\n" + result.output_tail
    assert result.steps == 2
    assert set(result.trainers) & {"GRPOTrainer", "OnlineDPOTrainer", "RLOOTrainer"}, result.trainers


@pytest.mark.slow
@pytest.mark.trl
@pytest.mark.parametrize("script", SCRIPTS)
def test_original_runs_on_the_trl_of_its_era(script: str, tmp_path: Path) -> None:
    trl = installed_trl()
    spec = SpecifierSet(header(script, "runs-on").removeprefix("trl"))
    if trl is None or trl >= Version("1.13") or not spec.contains(trl, prereleases=True):
        pytest.skip(f"the original needs trl{spec} (installed: {trl}); the tox `ppo` env has trl 1.12.0")
    result = run(EXAMPLES / script, cwd=tmp_path, timeout=600)
    assert result.passed, result.format(verbose=True) + "\n--- output ---\n" + result.output_tail
    assert result.steps == 2


@pytest.mark.slow
@pytest.mark.trl
def test_migrated_to_online_dpo_trains_untouched(tmp_path: Path) -> None:
    """`--to online-dpo` on one Trainer-style script (HfArgumentParser over the config: the field clash case)."""
    trl = installed_trl()
    if trl is None or trl < Version("1.13"):
        pytest.skip(f"migrated scripts target TRL >= 1.13 (installed: {trl})")
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLES, repo)
    script = repo / "experimental_ppo.py"
    proc = subprocess.run(
        [sys.executable, "-m", "compat.migrate", "--to", "online-dpo", "--target-trl", str(trl), "--allow-dirty", "--allow-no-vcs", "-q",
         str(script)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = run(script, cwd=repo, timeout=600)
    assert result.passed, result.format(verbose=True) + "\n--- output ---\n" + result.output_tail
    assert result.trainers == ["OnlineDPOTrainer"] and result.steps == 2
