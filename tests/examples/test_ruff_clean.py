"""The migrated bundled examples introduce no unused or duplicate import and no unused variable: the real `ruff`
(dev extra) with F401/F811/F841 finds nothing in the output that it did not find in the input."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from compat.migrate.engine import migrate_source
from migrations import select
from migrations.base import Options

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").rglob("*.py"))
CODES = "F401,F811,F841"


def _ruff() -> list[str]:
    try:
        import ruff  # noqa: F401 - only to know it is installed
    except ImportError:
        exe = shutil.which("ruff")
        if exe is None:
            pytest.skip("ruff is not installed (pip install -e .[dev])")
        return [exe]
    return [sys.executable, "-m", "ruff"]


def _findings(folder: Path) -> list[tuple[str, str, str]]:
    proc = subprocess.run([*_ruff(), "check", "--isolated", "--select", CODES, "--output-format", "json", "."],
                          cwd=folder, capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    return sorted((Path(f["filename"]).name, f["code"], f["message"]) for f in json.loads(proc.stdout or "[]"))


@pytest.mark.slow
def test_migrated_examples_add_no_ruff_findings(tmp_path):
    assert EXAMPLES
    before, after = tmp_path / "before", tmp_path / "after"
    before.mkdir()
    after.mkdir()
    rules = select(Options(), [], [])
    for path in EXAMPLES:
        text = path.read_text()
        result = migrate_source(text, options=Options(), rules=rules, path=str(path))
        assert result.ok, (path, result.errors)
        assert result.text != text, f"{path.name}: the example should need migrating"
        (before / path.name).write_text(text)
        (after / path.name).write_text(result.text)
    new = [f for f in _findings(after) if f not in _findings(before)]
    assert new == [], new
