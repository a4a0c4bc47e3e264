"""chat-template-processing-class: before/after and no-op cases; the rename held against the installed TRL."""

from __future__ import annotations

import inspect

from migrations.v1_3.chat_template_processing_class import MIGRATION as RULE
from tests.migrations._driver import check, noop


def test_the_installed_trl_takes_processing_class():
    import trl

    for fn in (trl.apply_chat_template, trl.maybe_apply_chat_template):
        assert list(inspect.signature(fn).parameters)[:2] == ["example", "processing_class"]


def test_map_fn_kwargs_and_direct_calls():
    # gustavecortal/eliciting_emotional_reasoning's prepare_dataset.py
    check(RULE, """\
        from trl import apply_chat_template
        from trl.data_utils import maybe_apply_chat_template as maybe

        dataset = dataset.map(apply_chat_template, fn_kwargs={"tokenizer": tokenizer})
        dataset = dataset.map(function=maybe, fn_kwargs=dict(tokenizer=tokenizer), num_proc=4)
        row = apply_chat_template(example, tokenizer=tokenizer)
    """, """\
        from trl import apply_chat_template
        from trl.data_utils import maybe_apply_chat_template as maybe

        dataset = dataset.map(apply_chat_template, fn_kwargs={"processing_class": tokenizer})
        dataset = dataset.map(function=maybe, fn_kwargs=dict(processing_class=tokenizer), num_proc=4)
        row = apply_chat_template(example, processing_class=tokenizer)
    """)


def test_left_alone():
    noop(RULE, """\
        from trl import apply_chat_template as trl_template

        def apply_chat_template(example, tokenizer):
            return example

        dataset = dataset.map(apply_chat_template, fn_kwargs={"tokenizer": tokenizer})
        row = trl_template(example, tokenizer)
        other = dataset.map(tokenize, fn_kwargs={"tokenizer": tokenizer})
        s = "apply_chat_template(example, tokenizer=tok)"
    """)
