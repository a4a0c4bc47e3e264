"""The marker ledger covers every file the migrator may mark, not only Python, notebooks and requirements.

Found on the corpus (shibing624/MedicalGPT): `ppo-cli-flags` marked `run_ppo.sh`, and `trl-compat check` said one
marker fewer was left than the tree held. Here a small PPO-era tree is migrated for real (`compat.migrate`), and the
check must list exactly the marker lines the migrator wrote, file by file (counted by reading the files).
"""

from __future__ import annotations

import codecs
import subprocess
from pathlib import Path

import migrations
from compat.check import check_paths, check_source, choose_target
from compat.check.analyze import Checker
from compat.markers import MARKER_FILE_PATTERNS, MARKER_TAG, matches_patterns
from compat.migrate.cli import main as migrate_main
from migrations.base import ManifestMigration
from tests.migrations.v1_13.test_ppo_cli_flags import LAUNCH, PPO_SCRIPT

README = f"""\
# PPO on IMDB

After `trl-compat migrate`, grep for `# {MARKER_TAG}:` (this sentence is prose, not a marker).

```bash
{LAUNCH.splitlines()[2]}
    --ppo_epochs 2 --init_kl_coef 0.1
```
"""


def test_every_manifest_rule_pattern_is_read_by_the_check() -> None:
    patterns = {p for rule in migrations.all_migrations() if isinstance(rule, ManifestMigration)
                for p in rule.patterns}
    assert patterns, "no manifest rules found"
    assert patterns <= set(MARKER_FILE_PATTERNS), sorted(patterns - set(MARKER_FILE_PATTERNS))


def test_pattern_matching() -> None:
    assert matches_patterns("a/b/run_ppo.sh", MARKER_FILE_PATTERNS)
    assert matches_patterns("x/requirements/base.in", MARKER_FILE_PATTERNS)
    assert matches_patterns("dev-requirements.txt", MARKER_FILE_PATTERNS)
    assert matches_patterns("configs/deepspeed_zero3.json", MARKER_FILE_PATTERNS)
    assert not matches_patterns("data/train.json", MARKER_FILE_PATTERNS)
    assert not matches_patterns("base.in", MARKER_FILE_PATTERNS)


def test_markdown_markers_are_read_in_fences_only() -> None:
    checker = Checker("1.16.0")
    text = README.replace("```bash\n", f"```bash\n# {MARKER_TAG}: [ppo-cli-flags] fix the flags\n")
    result = check_source("README.md", text, checker)
    assert [(m.line, m.rule) for m in result.markers] == [(6, "ppo-cli-flags")]


def _marker_lines(root: Path) -> dict[str, int]:
    """Lines holding a marker, per file, read from the files (the README's prose line excluded by its text)."""
    counts = {}
    for path in root.rglob("*"):
        if path.is_file() and ".git" not in path.parts:
            n = sum(1 for line in path.read_text().splitlines()
                    if MARKER_TAG in line and "this sentence is prose" not in line)
            if n:
                counts[path.relative_to(root).as_posix()] = n
    return counts


def test_check_lists_every_marker_the_migrator_wrote(tmp_path: Path) -> None:
    (tmp_path / "ppo.py").write_text(PPO_SCRIPT)
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "run_ppo.sh").write_text(LAUNCH)
    (tmp_path / "README.md").write_text(README)
    (tmp_path / "requirements.txt").write_text("trl==0.8.6\ntransformers==4.38.2\n")
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "PPO era"], check=True)  # the launcher rule reads scripts as committed
    assert migrate_main([str(tmp_path), "--target-trl", "1.16"]) in (0, 1)

    written = _marker_lines(tmp_path)
    assert written.get("scripts/run_ppo.sh") and written.get("README.md") and written.get("ppo.py"), written
    report = check_paths([str(tmp_path)], choose_target([str(tmp_path)], "1.16"))
    listed = {Path(f.path).resolve().relative_to(tmp_path.resolve()).as_posix(): len(f.markers)
              for f in report.files if f.markers}
    assert listed == written
    assert report.markers == sum(written.values())


def test_check_reads_a_utf16_requirements_file_as_pip_does(tmp_path: Path) -> None:
    """A UTF-16 requirements file (PowerShell's `pip freeze >`) holds no ASCII `trl` bytes: its marker is still found
    (the file is decoded by its byte-order mark before the prefilter)."""
    text = "trl @ git+https://example.org/fork/trl  # TODO(trl-compat): [dependency-manifests] a fork\r\n"
    (tmp_path / "requirements.txt").write_bytes(codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
    report = check_paths([str(tmp_path)], choose_target([str(tmp_path)], "1.16"))
    assert [(Path(f.path).name, len(f.markers), f.errors) for f in report.files] == [("requirements.txt", 1, [])]
