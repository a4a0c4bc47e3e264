"""Before/after cases for the PPO rules (ppo-to-grpo, value-head-models, ppo-helpers).

Every `cases/NAME.before.py` is migrated (with `--to` from `NAME.options`, default grpo) and must give
`cases/NAME.after.py` exactly; `neg_*` cases have no after file and must come back byte-identical. Every case is
also migrated a second time (the engine's `verify_idempotent`: the output, migrated again, must not change), and
every after file must compile.
Set TRL_COMPAT_UPDATE_CASES=1 to (re)write the after files from the current rules, then review the diff.
"""

from __future__ import annotations

import os

import pytest

from tests.migrations.ppo.test_anchors import emitted_anchors_missing
from tests.migrations.ppo._harness import CASES, case_names, case_option, expected_path, migrate

UPDATE = os.environ.get("TRL_COMPAT_UPDATE_CASES") == "1"


@pytest.mark.parametrize("name", case_names())
def test_case(name: str) -> None:
    before = (CASES / f"{name}.before.py").read_text()
    result = migrate(before, case_option(name))
    assert result.ok, result.errors
    assert not emitted_anchors_missing(result.findings, result.text)
    if name.startswith("neg_"):
        assert not expected_path(name).exists(), "negative controls have no after file"
        assert result.text == before
        assert not result.findings
        return
    if UPDATE:
        expected_path(name).write_text(result.text)
    expected = expected_path(name).read_text()
    assert result.text == expected
    assert result.text != before, "a positive case must change something"


@pytest.mark.parametrize("name", case_names())
def test_after_file_compiles(name: str) -> None:
    path = expected_path(name) if expected_path(name).exists() else CASES / f"{name}.before.py"
    compile(path.read_text(), str(path), "exec")


def test_enough_cases() -> None:
    """Every era and the negative controls are covered (at least 40 cases in all)."""
    names = case_names()
    assert len(names) >= 40

    def count(*prefixes: str) -> int:
        return sum(n.startswith(prefixes) for n in names)

    assert count("classic_") >= 10  # era 1: the step loop
    assert count("trainer_", "ppov2_") >= 10  # era 2: Trainer-style PPOv2 / PPO
    assert count("experimental_") >= 5  # era 3: trl.experimental.ppo
    assert count("neg_") >= 5  # must come back byte-identical
