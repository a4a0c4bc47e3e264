"""Drive the PPO rules the way the engine does, for the case tests.

`migrate(text, to)` runs exactly the three PPO rules (so other rules landing in the registry do not change these
expected outputs) through `compat.migrate.engine.migrate_source`, which re-wraps the tree between rules, verifies the
output parses, and (with `verify_idempotent=True`) checks that a second run changes nothing.
"""

from __future__ import annotations

from pathlib import Path

from compat.migrate.engine import Result, migrate_source
from migrations import get
from migrations.base import Options

CASES = Path(__file__).parent / "ppo_cases"
PPO_RULE_IDS = ("ppo-to-grpo", "value-head-models", "ppo-helpers")


def ppo_rules() -> list:
    return [get(i) for i in PPO_RULE_IDS]


def migrate(text: str, to: str = "grpo") -> Result:
    return migrate_source(text, options=Options(to=to), rules=ppo_rules(), verify_idempotent=True)


def case_names() -> list[str]:
    return sorted(p.name[: -len(".before.py")] for p in CASES.glob("*.before.py"))


def case_option(name: str) -> str:
    opt = CASES / f"{name}.options"
    return opt.read_text().strip() if opt.exists() else "grpo"


def expected_path(name: str) -> Path:
    """`NAME.after.py`; negative controls (`neg_*`) have none: their output must equal the input byte for byte."""
    return CASES / f"{name}.after.py"
