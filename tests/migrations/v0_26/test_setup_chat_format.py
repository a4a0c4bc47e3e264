"""Before/after and no-op cases for `setup-chat-format`."""

from __future__ import annotations

import pytest

from migrations.v0_26.setup_chat_format import MIGRATION as RULE
from tests.migrations._driver import check, noop


def test_moves_to_compat():
    findings = check(RULE, """\
        from trl import SFTTrainer, setup_chat_format

        model, tok = setup_chat_format(model, tok)
    """, """\
        from trl import SFTTrainer
        from compat.trl import setup_chat_format

        model, tok = setup_chat_format(model, tok)
    """)
    assert findings and all(f.changed for f in findings)
    check(RULE, """\
        import trl
        trl.setup_chat_format(m, t)
    """, """\
        import trl
        import compat.trl

        compat.trl.setup_chat_format(m, t)
    """)


def test_noops():
    noop(RULE, """\
        from trl import clone_chat_template

        def setup_chat_format(model, tok):
            return clone_chat_template(model, tok, "org/model")

        setup_chat_format(m, t)
    """)
    noop(RULE, """\
        from .utils import setup_chat_format
        setup_chat_format(m, t)
    """)


@pytest.mark.slow  # builds a tiny model (transformers import)
def test_the_compat_copy_sets_up_chatml():
    """Oracle: the ChatML layout written out by hand, the tokenizer's own length, the ids the tokenizer assigned."""
    import compat.trl
    from compat.tiny import tiny_model, tiny_tokenizer

    tok = tiny_tokenizer()
    tok.chat_template = None
    model = tiny_model(vocab_size=len(tok))
    model, tok = compat.trl.setup_chat_format(model, tok)
    assert (tok.bos_token, tok.eos_token, tok.pad_token) == ("<|im_start|>", "<|im_end|>", "<|im_end|>")
    text = tok.apply_chat_template([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}],
                                   tokenize=False, add_generation_prompt=True)
    assert text == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\nyo<|im_end|>\n<|im_start|>assistant\n"
    assert model.get_input_embeddings().weight.shape[0] == len(tok)
    assert model.config.eos_token_id == tok.convert_tokens_to_ids("<|im_end|>")
    assert model.config.bos_token_id == tok.convert_tokens_to_ids("<|im_start|>")
