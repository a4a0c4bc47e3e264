"""docs/breaks.md (appended to MIGRATION.md by the lead) has one section per rule of this issue, with its anchor."""

from __future__ import annotations

import re
from pathlib import Path

import migrations

DOC = Path(__file__).resolve().parents[3] / "docs" / "breaks.md"
OWNED = {
    "removed-dataset-formatting", "deprecated-options", "deprecated-import-paths", "lm-head-fp32-upcast",
    "dependency-manifests", "removed-bco", "removed-gspo-token", "removed-grpo-with-replay-buffer", "removed-nash-md",
    "removed-prm", "removed-xpo", "trl-losses-to-compat", "use-liger-kernel-to-kernels",
    "patch-chunked-lm-head-to-fused", "removed-dft-loss", "removed-minillm", "removed-prepare-multimodal-messages-vllm",
    "deprecated-options-1-15", "removed-ssd",
}


def test_every_rule_has_a_section_with_its_anchor():
    text = DOC.read_text(encoding="utf-8")
    anchors = re.findall(r'<a id="([^"]+)"></a>', text)
    assert len(anchors) == len(set(anchors)), "duplicate anchors"
    rules = {m.id: m for m in migrations.all_migrations() if m.id in OWNED}
    assert set(rules) == OWNED
    for rule in rules.values():
        assert rule.anchor in anchors, rule.id
        assert f"`{rule.id}`" in text, rule.id
    assert not any(a.startswith("ppo") for a in anchors)
