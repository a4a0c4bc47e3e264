"""No false positives on a real code base without TRL code: the installed `transformers` package.

transformers is full of words TRL rules trigger on (`pad_token`, `float32`, `use_liger_kernel`, `losses`, ...), so
the files that pass the prefilter are exactly the ones at risk. Every rule registered runs over the smallest such
files (a bounded subset, to keep the test fast; `benchmarks/migrate_repo.py` runs the whole tree) and must change
nothing, add no TODO marker and fail on nothing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from compat.migrate import migrate_paths, migrate_source
from compat.migrate.runner import _Prefilter
from migrations import all_migrations
from migrations.base import Migration, PythonMigration

transformers = pytest.importorskip("transformers")
ROOT = Path(transformers.__file__).parent
BUDGET_BYTES = 60_000  # of prefilter-positive source (libcst + metadata: roughly 1 CPU-s per 50 kB)


@pytest.mark.slow
def test_transformers_subset_changes_nothing(tmp_path):
    """Through the CLI path, with every gate in place: every file that passes the prefilter, plus the smallest files
    that hold a plain trigger substring (the ones the gates must stop), copied and migrated in --check mode."""
    # TRL's own rules: the transformers/peft/accelerate folders rewrite transformers-era spellings (`torch_dtype=`) by
    # design, and a run over a tree that uses no TRL (this one) never selects them (`Options.uses_trl`)
    rules = [r for r in all_migrations() if r.library == "trl"]
    prefilter = _Prefilter(rules)
    triggers = tuple({t.encode() for r in rules for t in r.triggers})
    passing, near = [], []
    for size, path in sorted((p.stat().st_size, p) for p in ROOT.rglob("*.py")):
        data = path.read_bytes()
        if prefilter.candidate(str(path), data):
            passing.append(path)
        elif len(near) < 100 and any(t in data for t in triggers):
            near.append(path)
    assert len(near) == 100
    for path in passing + near:
        dest = tmp_path / "transformers" / path.relative_to(ROOT)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest)
    report = migrate_paths([str(tmp_path / "transformers")], rules=rules, mode="check", jobs=1)
    changed = [(f.path, f.rules_applied, [x.message for x in f.findings]) for f in report.files if f.status != "unchanged"]
    assert changed == [], changed
    assert report.totals["scanned"] == len(passing) + len(near)
    assert report.totals["parsed"] <= len(passing)
    assert all(not f.findings or all(x.severity == "info" and not x.changed for x in f.findings) for f in report.files)


@pytest.mark.slow
def test_rules_change_nothing_even_without_their_gates(monkeypatch):
    """The gates (`requires`, `pattern`) keep most of transformers from the parser, so the rules themselves are tested
    here with the gates off: every rule runs on the smallest files whose text holds one of its plain trigger
    substrings (`pad_token`, `float32`, `losses`, `PPOTrainer`...) and must change nothing and add no marker."""
    monkeypatch.setattr(Migration, "triggered_by", lambda self, text: any(t in text for t in self.triggers))
    rules = [r for r in all_migrations() if isinstance(r, PythonMigration) and r.library == "trl"]
    chosen, total = [], 0
    for size, path in sorted((p.stat().st_size, p) for p in ROOT.rglob("*.py")):  # smallest first
        if total + size > BUDGET_BYTES:
            break
        text = path.read_text(encoding="utf-8")
        if any(r.triggered_by(text) for r in rules):
            chosen.append((path, text))
            total += size
    assert len(chosen) >= 10
    for path, text in chosen:
        result = migrate_source(text, rules=rules, path=str(path))
        assert result.errors == [] and result.parsed, path
        assert result.text == text, (path, result.rules_applied)
        assert all(f.severity == "info" and not f.changed for f in result.findings), (path, result.findings)
