"""Before/after and no-op cases for `removed-simple-chat-templates`."""

from __future__ import annotations

from migrations.v0_27.removed_simple_chat_templates import MIGRATION as RULE
from tests.migrations._driver import check, noop


def test_moves_to_compat():
    check(RULE, """\
        from trl.trainer.utils import SIMPLE_CHAT_TEMPLATE, SIMPLE_QUERY_CHAT_TEMPLATE
        from trl.trainer.utils import SIMPLE_SFT_CHAT_TEMPLATE as SFT_T
        tok.chat_template = SIMPLE_CHAT_TEMPLATE
    """, """\
        from compat.trl import SIMPLE_CHAT_TEMPLATE, SIMPLE_QUERY_CHAT_TEMPLATE
        from compat.trl import SIMPLE_SFT_CHAT_TEMPLATE as SFT_T
        tok.chat_template = SIMPLE_CHAT_TEMPLATE
    """)


def test_noops():
    noop(RULE, """\
        import trl
        SIMPLE_CHAT_TEMPLATE = "{{ messages }}"
        tok.chat_template = SIMPLE_CHAT_TEMPLATE
    """)


def test_the_copy_is_the_trl_string():
    import compat.trl

    assert compat.trl.SIMPLE_CHAT_TEMPLATE == (
        "{% for message in messages %}{{message['role'].capitalize() + ': ' + message['content'] + '\n\n'}}"
        "{% endfor %}{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}")
    assert compat.trl.SIMPLE_QUERY_CHAT_TEMPLATE == "{% for message in messages %}{{' ' + message['content']}}{% endfor %}"
    assert compat.trl.SIMPLE_SFT_CHAT_TEMPLATE == compat.trl.SIMPLE_QUERY_CHAT_TEMPLATE + "{{ eos_token }}"
