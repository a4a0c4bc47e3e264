"""Fake installed distributions for the compat tests: **metadata only**.

A fake is a ``NAME-VERSION.dist-info`` folder holding a two-header ``METADATA`` file (Name, Version) and nothing else:
no package code, nothing importable. That is all ``compat`` reads (it never imports the packages it checks), and it is
the only way to test versions that cannot be installed here (vLLM on a CPU machine, peft 0.12.0, ``N/A`` strings,
dev/rc builds) or absences (a TRL 1.13 without ``requests``).

Two ways to use them:
* in-process, ``check_environment(path=[fake_env(...)])``: the fake folder *is* the whole environment;
* in a subprocess, ``run_python(..., fakes=dir)``: the folder goes first on ``PYTHONPATH`` and shadows the real
  distributions of the test venv (importlib.metadata returns the first match on ``sys.path``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

# The env var is cleared for subprocesses unless a test sets it (the `ppo` tox env sets it to `warn`).
_CHECK_VAR = "TRL_COMPAT_CHECK"


def write_dist_info(root: Path, name: str, version: str, requires: Sequence[str] = ()) -> Path:
    """One fake ``*.dist-info`` folder (metadata only) for distribution ``name`` at ``version``, declaring
    ``requires`` as ``Requires-Dist`` lines."""
    safe_version = re.sub(r"[^A-Za-z0-9.+]", "_", version)
    folder = root / f"{re.sub(r'[-_.]+', '_', name)}-{safe_version}.dist-info"
    folder.mkdir(parents=True)
    declared = "".join(f"Requires-Dist: {r}\n" for r in requires)
    (folder / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{declared}\n",
                                     encoding="utf-8")
    return folder


def fake_env(root: Path, versions: Mapping[str, str | None]) -> str:
    """A folder holding one fake dist-info per ``versions`` entry (None entries are left out: not installed)."""
    root.mkdir(parents=True, exist_ok=True)
    for name, version in versions.items():
        if version is not None:
            write_dist_info(root, name, version)
    return str(root)


def run_python(
    args: Sequence[str],
    *,
    fakes: str | None = None,
    env: Mapping[str, str] | None = None,
    executable: str | None = None,
    cwd: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``python ARGS`` (or ``executable ARGS``) in a fresh process, fakes first on PYTHONPATH."""
    child_env = {k: v for k, v in os.environ.items() if k != _CHECK_VAR}
    if fakes is not None:
        child_env["PYTHONPATH"] = os.pathsep.join(p for p in (fakes, child_env.get("PYTHONPATH", "")) if p)
    child_env.update(env or {})
    command = [executable] if executable else [sys.executable]
    return subprocess.run(
        [*command, *args], capture_output=True, text=True, env=child_env, cwd=cwd, timeout=120, check=False
    )
