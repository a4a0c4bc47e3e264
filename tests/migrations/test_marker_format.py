"""The marker format: `# TODO(trl-compat): <summary> [<rule id>]`, at most 100 columns with its indentation.

The unit tests hold `summarize` / `fit_marker` / `same_marker` against strings written out by hand. The sweep runs the
whole rule set (every rule the default target needs) over the PPO cases and the bundled examples and checks every
marker line it writes: width, a known rule id at the end, a second run adds nothing. The old format of earlier
trl-compat versions (`... (see MIGRATION.md#anchor)`) must be recognised: a file that holds old markers gets no second
marker for the same step.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from packaging.version import Version

import migrations
from compat.markers import scan_text
from compat.migrate.engine import migrate_source
from migrations.base import (
    MARKER_WIDTH,
    TODO_PREFIX,
    Options,
    fit_marker,
    fit_marker_lines,
    fit_markers,
    same_marker,
    summarize,
    todo_text,
)
from tests.migrations._driver import STACK
from tests.migrations.v1_13._ppo_harness import CASES

ROOT = Path(__file__).resolve().parents[2]
RULE_IDS = {rule.id for rule in migrations.all_migrations()}
TAIL = re.compile(r" \[(?P<rule>[a-z0-9-]+)\]$")

LONG = ("the value model `vm` is no longer used (GRPO estimates advantages from groups of completions); remove its "
        "construction")


def test_todo_text_keeps_the_whole_message_and_names_the_rule() -> None:
    assert todo_text("x  was\nremoved", "an-anchor", "a-rule") == "# TODO(trl-compat): x was removed [a-rule]"
    assert todo_text("x", "an-anchor") == "# TODO(trl-compat): x [an-anchor]"  # a rule's anchor defaults to its id


def test_summary_is_the_whole_message_then_clauses_then_words() -> None:
    assert summarize("short message", 40) == "short message"
    # clauses: the longest run of whole clauses that fits (here up to the parenthesis)
    assert summarize(LONG, 60) == "the value model `vm` is no longer used"
    # no clause boundary inside brackets: `(TRL 0.27 - 1.0)` is not cut at its dash
    assert summarize("trl.trainer.utils.truncate_response is gone (TRL 0.27 - 1.0); copy it", 60) == (
        "trl.trainer.utils.truncate_response is gone (TRL 0.27 - 1.0)")
    # a clause shorter than 32 characters is no summary: words, then the ellipsis
    assert summarize("model.save_pretrained: the checkpoint no longer holds value-head weights", 50) == (
        "model.save_pretrained: the checkpoint no longer...")
    assert summarize("abcdefghijklmnopqrstuvwxyz", 10) == "abcdefg..."


def test_fit_marker_cuts_at_its_column_and_leaves_other_comments_alone() -> None:
    text = todo_text(LONG, "ppo-value-model", "ppo-to-grpo")
    assert fit_marker(text) == "# TODO(trl-compat): the value model `vm` is no longer used [ppo-to-grpo]"
    deep = fit_marker(text, 40)
    assert 40 + len(deep) <= MARKER_WIDTH and deep.endswith(" [ppo-to-grpo]")
    old = f"{TODO_PREFIX} {LONG} (see MIGRATION.md#ppo-value-model)"
    assert fit_marker(old) == old  # an earlier run's marker is the user's text now
    assert fit_marker("# just a comment " + "x" * 120) == "# just a comment " + "x" * 120


def test_fit_markers_in_code_and_manifests() -> None:
    marker = todo_text(LONG, "ppo-value-model", "ppo-to-grpo")
    code = f"def f():\n    {marker}\n    vm = 1\ns = {marker!r}\n"
    fitted = fit_markers(code)
    lines = fitted.splitlines()
    assert lines[1] == "    # TODO(trl-compat): the value model `vm` is no longer used [ppo-to-grpo]"
    assert lines[3] == code.splitlines()[3]  # a string that holds marker text is no marker
    assert fit_marker_lines(f"{marker}\r\ntrl==0.11\r\n") == (
        "# TODO(trl-compat): the value model `vm` is no longer used [ppo-to-grpo]\r\ntrl==0.11\r\n")


def test_same_marker_sees_through_the_cut_and_the_old_format() -> None:
    text = todo_text(LONG, "ppo-value-model", "ppo-to-grpo")
    for column in (0, 4, 12, 40):
        assert same_marker(fit_marker(text, column), text)
    assert same_marker(f"{TODO_PREFIX} {LONG} (see MIGRATION.md#ppo-value-model)", text)
    assert not same_marker(f"{TODO_PREFIX} {LONG} (see MIGRATION.md#ppo-value-model)",
                           todo_text("the value model `vm` is gone", "x", "ppo-to-grpo"))
    assert not same_marker("# TODO(trl-compat): the value model `vm` is no longer used [value-head-models]", text)
    assert not same_marker("# TODO(trl-compat): the reward model is no longer used [ppo-to-grpo]", text)


def test_the_scanner_reads_the_rule_from_either_format() -> None:
    found = scan_text("a.py", "# TODO(trl-compat): x was removed [removed-bco]\n"
                              "# TODO(trl-compat): y (see MIGRATION.md#removed-xpo)\nimport trl\n")
    assert [(m.rule, m.message) for m in found] == [("removed-bco", "x was removed"),
                                                     ("removed-xpo", "y (see MIGRATION.md#removed-xpo)")]


def _sweep_inputs() -> list[Path]:
    files = sorted(CASES.glob("*.before.py"))
    files += sorted(p for p in (ROOT / "examples").rglob("*") if p.suffix in (".py", ".txt", ".ipynb"))
    return files


OPTIONS = Options(target_trl=Version("1.16.0"), targets=tuple((k, Version(v)) for k, v in sorted(STACK.items())))


def _marker_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.lstrip().startswith(TODO_PREFIX)]


@pytest.mark.parametrize("path", _sweep_inputs(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_marker_of_the_whole_rule_set_fits_and_names_a_rule(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    name = path.name.replace(".before.py", ".py")
    result = migrate_source(text, options=OPTIONS, path=name, verify_idempotent=True)
    assert result.ok, result.errors
    before = set(_marker_lines(text))
    for line in _marker_lines(result.text):
        if line in before:
            continue
        assert len(line.expandtabs()) <= MARKER_WIDTH, line
        tail = TAIL.search(line)
        assert tail is not None and tail.group("rule") in RULE_IDS, line
    # every manual finding has its marker, found again by the scanner with the rule it names
    manual = [f for f in result.findings if f.severity == "manual"]
    if name.endswith(".py") and manual:
        assert {m.rule for m in scan_text(name, result.text)} <= RULE_IDS


def test_the_sweep_writes_markers() -> None:
    """The sweep above is not vacuous: the inputs get many markers, from several rules."""
    rules: set[str] = set()
    count = 0
    for path in _sweep_inputs()[::4]:
        result = migrate_source(path.read_text(encoding="utf-8"), options=OPTIONS,
                                path=path.name.replace(".before.py", ".py"))
        for line in _marker_lines(result.text):
            count += 1
            rules.add(TAIL.search(line).group("rule"))
    assert count >= 30 and len(rules) >= 2, (count, rules)


def _old_format(text: str, findings: list) -> str:
    """`text` with every new-format marker written out as an earlier trl-compat wrote it (full message + anchor)."""
    out = []
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        tail = TAIL.search(stripped) if stripped.startswith(TODO_PREFIX) else None
        if tail is not None:
            match = next(f for f in findings
                         if same_marker(stripped, todo_text(f.message, f.anchor, tail.group("rule"))))
            indent = line[: len(line) - len(line.lstrip())]
            line = f"{indent}{TODO_PREFIX} {' '.join(match.message.split())} (see MIGRATION.md#{match.anchor})\n"
        out.append(line)
    return "".join(out)


@pytest.mark.parametrize("case", ["classic_sentiment_loop", "classic_subclass_leftovers", "star_import",
                                  "trainer_tokenize_visible", "classic_value_head_usage"])
def test_markers_of_an_earlier_version_get_no_second_marker(case: str) -> None:
    source = CASES / f"{case}.before.py"
    first = migrate_source(source.read_text(), options=OPTIONS, path=f"{case}.py")
    assert first.ok and _marker_lines(first.text)
    old = _old_format(first.text, first.findings)
    assert old != first.text and all(len(line) > 0 for line in _marker_lines(old))
    again = migrate_source(old, options=OPTIONS, path=f"{case}.py")
    assert again.ok and again.text == old, "\n".join(
        line for line in again.text.splitlines() if line not in old.splitlines())


def test_a_marker_deep_in_a_block_fits() -> None:
    src = textwrap.dedent("""\
        from trl import PPOTrainer, PPOConfig

        class A:
            def f(self):
                if True:
                    for x in y:
                        with z:
                            trainer = PPOTrainer(config=PPOConfig(batch_size=4, ppo_epochs=2, cliprange=0.2), model=m)
                            trainer.step(q, r, s)
        """)
    result = migrate_source(src, options=OPTIONS, path="deep.py", verify_idempotent=True)
    assert result.ok, result.errors
    lines = _marker_lines(result.text)
    assert lines and all(len(line) <= MARKER_WIDTH and TAIL.search(line) for line in lines), lines


def test_findings_carry_the_full_message_the_anchor_and_a_url(tmp_path: Path) -> None:
    """The marker is short; the JSON and SARIF reports keep the full message, the anchor and the guide's address."""
    from compat.migrate import report as report_mod
    from compat.migrate.runner import migrate_paths

    (tmp_path / "t.py").write_text((CASES / "classic_sentiment_loop.before.py").read_text())
    result = migrate_paths([str(tmp_path)], options=OPTIONS, mode="check")
    data = report_mod.to_json(result)
    manual = [f for entry in data["files"] for f in entry["findings"] if f["severity"] == "manual"]
    assert manual and all(f["url"].startswith("https://") and f["url"].endswith("#" + f["anchor"]) for f in manual)
    assert any(len(f["message"]) > MARKER_WIDTH for f in manual)  # what the marker cut is still in the report
    sarif = report_mod.to_sarif(result)
    rules = sarif["runs"][0]["tool"]["driver"]["rules"]
    assert all(r["helpUri"].startswith("https://") for r in rules if "help" in r)
    urls = [r["properties"].get("guideUrl", "") for r in sarif["runs"][0]["results"] if r["ruleId"] in RULE_IDS]
    assert urls and all(u.startswith("https://") for u in urls)


def test_notebook_and_manifest_markers_fit() -> None:
    import json

    cell = ("from trl import PPOTrainer, PPOConfig\n\nif True:\n"
            "    trainer = PPOTrainer(PPOConfig(batch_size=4, init_kl_coef=0.2), model, ref_model, tok, dataset=ds)\n")
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                     "source": cell.splitlines(keepends=True)}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    result = migrate_source(json.dumps(nb, indent=1) + "\n", options=OPTIONS, path="ppo.ipynb", verify_idempotent=True)
    assert result.ok, result.errors
    source = "".join(json.loads(result.text)["cells"][0]["source"])
    lines = _marker_lines(source)
    assert lines and all(len(line) <= MARKER_WIDTH and TAIL.search(line) for line in lines), lines
    assert any(line.startswith("    # TODO(trl-compat): ") for line in lines)  # cut at the cell's indentation

    fork = "trl @ git+https://github.com/someone/trl@" + "f" * 40 + "\n"
    result = migrate_source(fork, options=OPTIONS, path="requirements.txt", verify_idempotent=True)
    assert result.ok, result.errors
    lines = _marker_lines(result.text)
    assert lines and all(len(line) <= MARKER_WIDTH and TAIL.search(line) for line in lines), result.text


def test_the_guide_url_is_the_wheel_metadata_migration_guide():
    import tomllib
    from pathlib import Path

    from migrations.base import GUIDE_URL, guide_url

    urls = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"]["urls"]
    assert urls["Migration guide"] == GUIDE_URL
    assert guide_url("ppo-to-grpo") == f"{GUIDE_URL}#ppo-to-grpo"
