"""`patch-chunked-lm-head-to-fused`: before/after and no-op cases."""

from __future__ import annotations

from migrations.v1_15.patch_chunked_lm_head_to_fused import MIGRATION as PATCH
from tests.migrations._driver import noop, run


def test_patch_chunked_lm_head_call_rewritten_with_todo():
    out, findings = run(PATCH, """\
        from trl.trainer.utils import patch_chunked_lm_head

        patch_chunked_lm_head(model, 4096, 0.7)
    """)
    assert out.splitlines()[0] == "from trl.trainer import add_fused_lm_head"
    assert out.splitlines()[-1] == 'add_fused_lm_head(model, temperature=0.7, outputs=("log_probs", "entropy"))'
    assert any("fused_lm_head=True" in f.message for f in findings) and out.count("# TODO(trl-compat)") == 1
    assert any(f.changed for f in findings) and any(f.severity == "manual" for f in findings)


def test_patch_chunked_lm_head_keywords_alias_and_router():
    out, findings = run(PATCH, """\
        import trl.trainer as tt
        tt.patch_chunked_lm_head(model=m, chunk_size=cs, temperature=t, output_router_logits=True)
    """)
    assert "trl.trainer.add_fused_lm_head(m, temperature=t, outputs=(\"log_probs\", \"entropy\"))" in out
    assert any("output_router_logits is set" in f.message for f in findings)
    noop(PATCH, "from trl.trainer import add_fused_lm_head\nadd_fused_lm_head(model)\n")
    noop(PATCH, "def patch_chunked_lm_head(m): ...\npatch_chunked_lm_head(model)\n")
