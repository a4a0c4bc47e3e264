"""`compat.trl`'s copies of `trl.extras.dataset_formatting` (the 0.26.2 functions, 1.12.0's FORMAT_MAPPING).

Expected strings are written out from TRL 0.26.2's bodies (`tokenizer.apply_chat_template(..., tokenize=False)` of
the column, or of a user/assistant pair built from prompt/completion) with the in-process tokenizer's chat template.
"""

from __future__ import annotations

import warnings

import pytest

datasets = pytest.importorskip("datasets", reason="the copies build datasets (absent in the bare env)")

import compat.trl  # noqa: E402
from compat.tiny import tiny_tokenizer  # noqa: E402

_CONV = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]


@pytest.fixture(scope="module")
def tok():
    return tiny_tokenizer()


def test_conversations_function_formats_one_example_or_a_batch(tok):
    fmt = compat.trl.conversations_formatting_function(tok, "messages")
    one = tok.apply_chat_template(_CONV, tokenize=False)
    assert fmt({"messages": _CONV}) == one
    assert fmt({"messages": [_CONV, _CONV[:1]]}) == [one, tok.apply_chat_template(_CONV[:1], tokenize=False)]


def test_instructions_function_builds_a_user_assistant_pair(tok):
    fmt = compat.trl.instructions_formatting_function(tok)
    one = tok.apply_chat_template(_CONV, tokenize=False)
    assert fmt({"prompt": "hi", "completion": "hello"}) == one
    assert fmt({"prompt": ["hi", "hi"], "completion": ["hello", "hello"]}) == [one, one]


def test_no_deprecation_warning(tok):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compat.trl.conversations_formatting_function(tok, "messages")
        compat.trl.instructions_formatting_function(tok)


def test_formatting_func_from_dataset_picks_by_features(tok):
    chat = datasets.Dataset.from_dict({"messages": [_CONV]})
    assert chat.features["messages"] == compat.trl.FORMAT_MAPPING["chatml"]
    fmt = compat.trl.get_formatting_func_from_dataset(chat, tok)
    assert fmt(chat[0]) == tok.apply_chat_template(_CONV, tokenize=False)
    conv = datasets.Dataset.from_dict({"conversations": [_CONV]})
    assert compat.trl.get_formatting_func_from_dataset(conv, tok)(conv[0]) == fmt(chat[0])
    pairs = datasets.Dataset.from_dict({"prompt": ["hi"], "completion": ["hello"]})
    assert compat.trl.get_formatting_func_from_dataset(pairs, tok)(pairs[0]) == fmt(chat[0])
    # anything else: None (TRL: the instruction test runs only without a conversations column)
    assert compat.trl.get_formatting_func_from_dataset(datasets.Dataset.from_dict({"text": ["x"]}), tok) is None
    mixed = datasets.Dataset.from_dict({"conversations": ["x"], "prompt": ["hi"], "completion": ["hello"]})
    assert compat.trl.get_formatting_func_from_dataset(mixed, tok) is None
    assert compat.trl.get_formatting_func_from_dataset([_CONV], tok) is None
