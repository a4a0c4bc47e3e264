"""Guards users expect (issue 13): `trl-compat explain RULE` from the installed package, `--target-trl` outside the
supported range refused, and a repository whose own `migrations/` package or `compat.py` shadows trl-compat's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import migrations
from compat.explain import explain, guide_text, main, section
from compat.migrate.cli import main as migrate_main

ROOT = Path(__file__).resolve().parents[2]


def test_explain_prints_every_rules_own_section() -> None:
    for rule in migrations.all_migrations():
        text = explain(rule.id)
        assert text.startswith(f"{rule.id}: {rule.summary}\n") and f"TRL {rule.release}" in text
        body = section(guide_text(), rule.anchor)
        assert body and body.startswith("#") and body in text, rule.id
        assert '<a id="' not in body.splitlines()[-1]


def test_the_guide_ships_inside_the_migrations_package() -> None:
    # In tox envs this reads the installed wheel: the guide is package data there, not a file of the checkout.
    assert "## PPO -> GRPO" in guide_text()
    if (ROOT / "MIGRATION.md").is_file() and (ROOT / "migrations" / "MIGRATION.md").exists():
        assert guide_text() == (ROOT / "MIGRATION.md").read_text(encoding="utf-8")


def test_explain_cli_lists_and_refuses_unknown_ids(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert len(listed) == len(migrations.all_migrations())
    assert main(["no-such-rule"]) == 2
    assert "unknown migration 'no-such-rule'" in capsys.readouterr().err


def test_section_stops_at_the_next_heading_of_its_level() -> None:
    text = '<a id="a"></a>\n## A\nbody\n### A.1\nsub\n\n<a id="b"></a>\n## B\nother\n'
    assert section(text, "a") == "## A\nbody\n### A.1\nsub"
    assert section(text, "b") == "## B\nother"
    assert section(text, "missing") is None


@pytest.mark.parametrize("target, why", [("1.12", "migrates from"), ("0.11.4", "migrates from"),
                                         ("1.17", "no rule knows"), ("2.0", "no rule knows")])
def test_target_outside_the_supported_range_is_a_usage_error(target: str, why: str, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert migrate_main(["--check", "--target-trl", target, "."]) == 2
    err = capsys.readouterr().err
    assert "outside the supported range 1.13.0 to 1.16.x" in err and why in err


def _run(args: list[str], cwd: Path, executable: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([*(executable or [sys.executable]), *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=120, check=False)


@pytest.mark.slow
def test_a_repositorys_own_migrations_package_does_not_shadow_the_rules(tmp_path: Path) -> None:
    (tmp_path / "migrations").mkdir()
    (tmp_path / "migrations" / "__init__.py").write_text("class Migration:  # a Django app's migrations\n    pass\n")
    (tmp_path / "train.py").write_text("from trl import SFTConfig\nSFTConfig(loss_type='chunked_nll')\n")
    proc = _run(["-m", "compat.migrate", "--check", "--allow-dirty", "."], tmp_path)
    assert proc.returncode == 1, proc.stderr  # it ran the real rules and found work
    assert "would rewrite train.py" in proc.stdout + proc.stderr
    assert "shadows trl-compat's own `migrations`" in proc.stderr and "trl-compat migrate" in proc.stderr


@pytest.mark.slow
def test_a_local_compat_module_is_avoided_by_the_documented_commands(tmp_path: Path) -> None:
    (tmp_path / "compat.py").write_text("raise SystemExit('the repository-local compat.py was imported')\n")
    proc = _run(["-P", "-m", "compat.migrate", "--list"], tmp_path)
    assert proc.returncode == 0 and "ppo-to-grpo" in proc.stdout, proc.stderr
    script = Path(sys.executable).parent / "trl-compat"
    if not script.exists():
        pytest.skip("no trl-compat console script beside this interpreter")
    proc = _run(["migrate", "--list"], tmp_path, executable=[str(script)])
    assert proc.returncode == 0 and "ppo-to-grpo" in proc.stdout, proc.stderr
