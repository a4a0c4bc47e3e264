"""The transformers atlas and 5.x lazy fallbacks of `*TokenizerFast` names."""

from __future__ import annotations

from migrations.atlas import Atlas


def test_transformers_5_fast_tokenizer_names_fall_back_to_the_one_class():
    """transformers 5's lazy modules answer a `*TokenizerFast` name they no longer bind with the class without `Fast`
    (the installed release is the oracle: the import works and gives that class); a family without such a class
    (bloom) and the gone `tokenization_*_fast` modules stay absent."""
    import importlib

    import transformers
    from packaging.version import Version

    atlas = Atlas.load("transformers")
    assert atlas.has("5.24.0", "transformers.GPT2TokenizerFast")
    assert atlas.has("5.24.0", "transformers.models.gpt2.GPT2TokenizerFast")
    assert not atlas.has("5.24.0", "transformers.BloomTokenizerFast")
    assert not atlas.has("5.24.0", "transformers.models.gpt2.tokenization_gpt2_fast.GPT2TokenizerFast")
    if Version(transformers.__version__) >= Version("5.0"):
        assert importlib.import_module("transformers").GPT2TokenizerFast is transformers.GPT2Tokenizer
