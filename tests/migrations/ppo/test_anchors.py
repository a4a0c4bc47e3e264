"""Every TODO anchor the PPO rules can emit has a target in MIGRATION.md.

Two sources of anchors: every anchor string literal in the rule modules (so a branch no case reaches is still checked,
here), and the findings and markers of every case (what the rules really emitted, checked in `test_cases.test_case`
with `emitted_anchors_missing`, so each case is migrated once). A target is `<a id="X">` or a heading whose
GitHub slug is X.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from migrations import get
from tests.migrations.ppo._harness import PPO_RULE_IDS

ROOT = Path(__file__).resolve().parents[3]
GUIDE = ROOT / "MIGRATION.md"
RULE_FILES = [
    ROOT / "migrations" / "v1_13" / f
    for f in ("ppo_to_grpo.py", "value_head_models.py", "ppo_helpers.py", "_ppo_fields.py", "_ppo_loop.py")
]
MARKER = re.compile(r"# TODO\(trl-compat\): .*\(see MIGRATION\.md#([a-z0-9-]+)\)$", re.M)


def _slug(heading: str) -> str:
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def guide_anchors() -> set[str]:
    text = GUIDE.read_text()
    ids = set(re.findall(r'<a id="([^"]+)"', text))
    ids |= {_slug(h) for h in re.findall(r"^#+ (.+)$", text, re.M)}
    return ids


def _source_anchors() -> set[str]:
    found = set()
    for path in RULE_FILES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if re.fullmatch(r"(ppo-|value-head)[a-z0-9-]*", node.value):
                    found.add(node.value)
    return found


def test_rule_anchors_exist() -> None:
    anchors = guide_anchors()
    for rule_id in PPO_RULE_IDS:
        assert get(rule_id).anchor in anchors, rule_id


def test_every_anchor_literal_in_the_rules_exists() -> None:
    missing = _source_anchors() - guide_anchors() - set(PPO_RULE_IDS)
    assert not missing, f"anchors without a MIGRATION.md target: {sorted(missing)}"


def emitted_anchors_missing(findings, text: str) -> set[str]:  # type: ignore[no-untyped-def]
    """Anchors a migration emitted (findings and markers in the text) that MIGRATION.md lacks."""
    emitted = {f.anchor for f in findings if f.anchor}
    emitted |= set(MARKER.findall(text))
    return emitted - guide_anchors()
