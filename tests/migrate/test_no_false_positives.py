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

from compat.migrate import migrate_paths
from compat.migrate.runner import _Prefilter
from migrations import all_migrations

transformers = pytest.importorskip("transformers")
ROOT = Path(transformers.__file__).parent
BUDGET_BYTES = 60_000  # of prefilter-positive source (libcst + metadata: roughly 1 CPU-s per 50 kB)


@pytest.mark.slow
def test_transformers_subset_changes_nothing(tmp_path):
    rules = all_migrations()
    prefilter = _Prefilter(rules)
    chosen, total = [], 0
    for size, path in sorted((p.stat().st_size, p) for p in ROOT.rglob("*.py")):  # smallest first
        if total + size > BUDGET_BYTES:
            break
        if prefilter.candidate(path.name, path.read_bytes()):
            chosen.append(str(path.relative_to(ROOT)))
            total += size
    if not chosen:
        pytest.skip("no small transformers file passes the registered rules' prefilter: nothing could be rewritten")
    for rel in chosen:
        dest = tmp_path / "transformers" / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / rel, dest)
    report = migrate_paths([str(tmp_path / "transformers")], rules=rules, mode="check", jobs=1)
    changed = [(f.path, f.rules_applied, [x.message for x in f.findings]) for f in report.files if f.status != "unchanged"]
    assert changed == [], changed
    assert report.totals["parsed"] == len(chosen) > 0
    assert all(not f.findings or all(x.severity == "info" and not x.changed for x in f.findings) for f in report.files)
