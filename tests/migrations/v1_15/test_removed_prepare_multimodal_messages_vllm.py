"""`removed-prepare-multimodal-messages-vllm`: before/after and no-op cases."""

from __future__ import annotations

from migrations.v1_15.removed_prepare_multimodal_messages_vllm import MIGRATION as PMMV
from tests.migrations._driver import check, noop


def test_prepare_multimodal_messages_vllm():
    check(PMMV, """\
        import trl
        from trl.data_utils import prepare_multimodal_messages_vllm as prep
        a = prep(msgs)
        b = trl.prepare_multimodal_messages_vllm(msgs)
    """, """\
        import trl
        from compat.trl import prepare_multimodal_messages_vllm as prep
        import compat.trl

        a = prep(msgs)
        b = compat.trl.prepare_multimodal_messages_vllm(msgs)
    """)
    noop(PMMV, "from trl import prepare_multimodal_messages\nprepare_multimodal_messages(m)\n")
