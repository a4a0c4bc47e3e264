"""Rewrite `ppo_cases/*.after.py` from the current rules, then show what changed against git HEAD.

    python tests/migrations/v1_13/regen_ppo_cases.py             # rewrite, then report
    python tests/migrations/v1_13/regen_ppo_cases.py --markers   # ... and fail unless only marker lines changed

Same output as `TRL_COMPAT_UPDATE_CASES=1 pytest tests/migrations/v1_13/test_ppo_to_grpo.py` (the harness's
`migrate`), without pytest. `--markers` is the check for a change of the marker format: every line that is not a
`# TODO(trl-compat):` marker must be identical, and each file must keep its number of markers. Read the diff anyway.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from tests.migrations.v1_13._ppo_harness import (
    case_names,
    case_option,
    expected_path,
    migrate,
)

PREFIX = "# TODO(trl-compat)"


def _split(text: str) -> tuple[list[str], int]:
    lines = text.splitlines()
    markers = [line for line in lines if line.lstrip().startswith(PREFIX)]
    return [line for line in lines if not line.lstrip().startswith(PREFIX)], len(markers)


def main(argv: list[str]) -> int:
    markers_only = "--markers" in argv
    bad = []
    for name in case_names():
        path = expected_path(name)
        if not path.exists():
            continue  # negative controls have no after file
        result = migrate(path.with_name(f"{name}.before.py").read_text(), case_option(name))
        if not result.ok:
            print(f"{name}: {result.errors}")
            bad.append(name)
            continue
        path.write_text(result.text)
        rel = path.relative_to(ROOT).as_posix()
        head = subprocess.run(["git", "show", f"HEAD:{rel}"], cwd=ROOT, capture_output=True, text=True,
                              check=False).stdout
        if head != result.text:
            (code_a, n_a), (code_b, n_b) = _split(head), _split(result.text)
            only_markers = code_a == code_b and n_a == n_b
            print(f"{rel}: changed ({'marker lines only' if only_markers else 'CODE CHANGED'})")
            if markers_only and not only_markers:
                bad.append(name)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
