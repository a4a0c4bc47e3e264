"""MIGRATION.md has one section per rule, found from the registry alone: `<a id="ANCHOR"></a>` right above a heading
that names the rule's id in backticks. Anchors are unique. Nothing here lists rules by hand."""

from __future__ import annotations

import re
from pathlib import Path

import migrations

DOC = Path(__file__).resolve().parents[2] / "MIGRATION.md"
SECTION = re.compile(r'^<a id="([^"]+)"></a>\n(#+ .+)$', re.M)


def sections() -> dict[str, str]:
    """anchor -> the heading right below it."""
    text = DOC.read_text(encoding="utf-8")
    found = SECTION.findall(text)
    anchors = re.findall(r'<a id="([^"]+)"></a>', text)
    assert len(anchors) == len(set(anchors)), "duplicate anchors"
    return dict(found)


def test_every_rule_has_a_section_that_names_it():
    by_anchor = sections()
    rules = migrations.all_migrations()
    assert len(rules) >= 20
    for rule in rules:
        assert rule.anchor in by_anchor, f"{rule.id}: no <a id=\"{rule.anchor}\"></a> above a heading in MIGRATION.md"
        assert f"`{rule.id}`" in by_anchor[rule.anchor], f"{rule.id}: its section's heading does not name it"


def test_no_two_rules_share_a_section():
    anchors = [rule.anchor for rule in migrations.all_migrations()]
    assert len(anchors) == len(set(anchors))
