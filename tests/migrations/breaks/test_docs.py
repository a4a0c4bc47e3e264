"""MIGRATION.md has one section per rule, with its anchor, and every anchor is unique."""

from __future__ import annotations

import re
from pathlib import Path

import migrations

DOC = Path(__file__).resolve().parents[3] / "MIGRATION.md"
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
    assert not any(a.startswith("ppo") for a in anchors if a in {r.anchor for r in rules.values()})


def test_every_registered_rule_is_documented():
    """Not only this file's rules: every migration --list shows has its anchor and its id in the guide."""
    text = DOC.read_text(encoding="utf-8")
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', text))
    for rule in migrations.all_migrations():
        assert rule.anchor in anchors, rule.id
        assert f"`{rule.id}`" in text, rule.id


RELEASES = {
    "removed-dataset-formatting": "1.13", "deprecated-options": "1.13", "deprecated-import-paths": "1.13",
    "lm-head-fp32-upcast": "1.13", "dependency-manifests": "1.13", "removed-bco": "1.14",
    "removed-gspo-token": "1.14", "removed-grpo-with-replay-buffer": "1.14", "removed-nash-md": "1.14",
    "removed-prm": "1.14", "removed-xpo": "1.14", "trl-losses-to-compat": "1.14",
    "use-liger-kernel-to-kernels": "1.15", "patch-chunked-lm-head-to-fused": "1.15", "removed-dft-loss": "1.15",
    "removed-minillm": "1.15", "removed-prepare-multimodal-messages-vllm": "1.15", "deprecated-options-1-15": "1.15",
    "removed-ssd": "1.16",
}


def test_each_rule_sits_in_the_folder_of_its_release_and_follows_the_target():
    from packaging.version import Version

    from migrations.base import Options

    rules = {m.id: m for m in migrations.all_migrations() if m.id in OWNED}
    assert {i: r.release for i, r in rules.items()} == RELEASES
    for rule in rules.values():
        assert type(rule).__module__.split(".")[1] == "v" + rule.release.replace(".", "_")
    for target in ("1.13.0", "1.14.0", "1.15.0", "1.16.0"):
        chosen = {m.id for m in migrations.select(Options(target_trl=Version(target)))} & OWNED
        assert chosen == {i for i, r in RELEASES.items() if Version(r) <= Version(target)}
