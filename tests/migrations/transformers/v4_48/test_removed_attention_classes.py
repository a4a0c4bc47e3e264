"""`removed-attention-classes`: before/after and no-op cases."""

from __future__ import annotations

from migrations.atlas import Atlas
from migrations.transformers.v4_48._attention_classes import GONE
from migrations.transformers.v4_48.removed_attention_classes import MIGRATION as RULE
from tests.migrations._driver import noop, run


def test_the_issue_example_is_marked():
    src = ("from transformers.models.llama.modeling_llama import LlamaFlashAttention2\n\n\n"
           "class Patched(LlamaFlashAttention2):\n    pass\n")
    for stack in ({"transformers": "4.56.2"}, {"transformers": "5.24.0"}):
        out, findings = run(RULE, src, stack=stack)
        lines = out.splitlines()
        assert lines[0].startswith("# TODO(trl-compat): LlamaFlashAttention2 was removed in transformers")
        assert lines[0].endswith(" [removed-attention-classes]") and lines[1] == src.splitlines()[0]
        assert "4.48" in findings[0].message and "attn_implementation" in findings[0].message
        assert len(findings) == 2 and not any(f.changed for f in findings)


def test_the_table_matches_the_atlas():
    atlas = Atlas.load("transformers")
    assert "transformers.models.llama.modeling_llama.LlamaSdpaAttention" in GONE
    for qual, release in GONE.items():
        before = atlas.releases()[atlas.releases().index(release) - 1]
        assert atlas.has(before, qual) and not atlas.has(release, qual) and not atlas.has("5.24.0", qual)


def test_noop():
    noop(RULE, "from transformers.models.llama.modeling_llama import LlamaAttention\n")
    noop(RULE, "class LlamaFlashAttention2:\n    pass\n")  # a local class of that name
