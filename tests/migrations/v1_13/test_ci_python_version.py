"""ci-python-version: GitHub Actions workflows that install the project under a Python the target TRL does not
support are reported at each version's line, never edited. The floor is `python_floor` (TRL's own Requires-Python
in the atlas), not a number written in the test."""

from __future__ import annotations

from packaging.version import Version

from compat.migrate.engine import migrate_source
from migrations.base import Options
from migrations.kinds.requirements import python_floor
from migrations.v1_13.ci_python_version import MIGRATION as RULE
from migrations.v1_13.ci_python_version import python_versions

WORKFLOW = """\
name: tests
on: [push]
jobs:
  test:
    strategy:
      matrix:
        python-version: ["3.9", '3.11', "3.12"]
    steps:
      - uses: actions/setup-python@v5
        with:
          python-version: ${{ matrix.python-version }}
      - run: |
          python -m pip install --upgrade pip
          pip install -r requirements.txt
  legacy:
    steps:
      - uses: actions/setup-python@v5
        with:
          python-version:
            - "3.8"
            - 3.10.11
"""

LINT = """\
jobs:
  lint:
    steps:
      - uses: actions/setup-python@v5
        with:
          python-version: "3.8"
      - run: pip install ruff && ruff check .
"""


def _run(text: str, target: str = "1.16.0", uses_trl: bool = True):
    options = Options(target_trl=Version(target), uses_trl=uses_trl)
    rules = [RULE] if RULE.applies(options) else []
    result = migrate_source(text, options=options, rules=rules, path="/p/.github/workflows/tests.yml")
    assert result.ok and result.text == text  # never edited
    return [(f.line, f.severity, f.message) for f in result.findings if f.rule == RULE.id]


def test_the_versions_of_scalars_flow_lists_and_block_lists():
    assert python_versions(WORKFLOW) == [(7, "3.9"), (7, "3.11"), (7, "3.12"), (20, "3.8"), (21, "3.10.11")]


def test_versions_below_the_target_floor_are_warnings_at_their_line():
    floor = python_floor(Version("1.16.0"))
    below = [v for _line, v in python_versions(WORKFLOW) if not floor.specifier.contains(f"{v}.99")]
    found = _run(WORKFLOW)
    assert [line for line, _s, _m in found] == [7, 20, 21] and len(below) == 3
    assert all(s == "warning" and str(floor.specifier) in m for _l, s, m in found)
    # TRL 1.13 declares an older floor: 3.10 is fine there, 3.9 and 3.8 are not
    floor13 = python_floor(Version("1.13.0"))
    assert [line for line, _s, _m in _run(WORKFLOW, "1.13.0")] == \
        [line for line, v in python_versions(WORKFLOW) if not floor13.specifier.contains(f"{v}.99")]


def test_workflows_that_install_nothing_of_the_project_and_projects_without_trl():
    assert _run(LINT) == []  # `ruff check .` is no install of the project
    assert _run(WORKFLOW, uses_trl=False) == []
    assert _run(LINT.replace("pip install ruff", "pip install -e .[dev] ruff")) != []
