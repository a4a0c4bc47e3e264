"""Shared helpers for the migrator tests: run the CLI as a real subprocess, make real git repos."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from migrations.v1_15.sft_chunked_nll_loss_type import MIGRATION as RULE

REPO = Path(__file__).resolve().parents[2]

OLD_SFT = 'from trl import SFTConfig\n\ncfg = SFTConfig(output_dir="out", loss_type="chunked_nll")\n'
NEW_SFT = 'from trl import SFTConfig\n\ncfg = SFTConfig(output_dir="out", loss_type="nll")\n'


def run_cli(*args: str, cwd: Path, input: bytes | None = None, timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    """`python -m compat.migrate ARGS` in `cwd`, as a user would run it (stdout is a pipe, not a TTY)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "compat.migrate", *args], cwd=cwd, capture_output=True, input=input, env=env, timeout=timeout
    )


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env, check=True)
    return proc.stdout


def git_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", ".")
    return path


def commit_all(path: Path) -> None:
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "snapshot")
