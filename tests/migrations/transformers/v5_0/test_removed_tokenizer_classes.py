"""`removed-tokenizer-classes`: before/after and no-op cases."""

from __future__ import annotations

from migrations.atlas import Atlas
from migrations.transformers.v5_0._tokenizer_classes import GONE
from migrations.transformers.v5_0.removed_tokenizer_classes import MIGRATION as RULE
from tests.migrations._driver import check, noop, run


def test_the_issue_example():
    check(RULE, "from transformers import BloomTokenizerFast\n\ntok = BloomTokenizerFast.from_pretrained('bigscience/bloom-560m')\n",
          "from transformers import AutoTokenizer\n\ntok = AutoTokenizer.from_pretrained('bigscience/bloom-560m')\n")
    check(RULE, "from transformers.models.gpt2.tokenization_gpt2_fast import GPT2TokenizerFast as T\nt = T.from_pretrained(p)\n",
          "from transformers import AutoTokenizer as T\nt = T.from_pretrained(p)\n")


def test_another_use_marks_the_whole_file():
    src = ("from transformers import GPT2TokenizerFast\n\nt = GPT2TokenizerFast.from_pretrained(p)\n"
           "assert isinstance(t, GPT2TokenizerFast)\n")
    out, findings = run(RULE, src)
    assert out.startswith("# TODO(trl-compat): GPT2TokenizerFast was removed in transformers 5.0")
    assert "GPT2TokenizerFast.from_pretrained(p)" in out and not any(f.changed for f in findings)


def test_table_and_successor():
    atlas = Atlas.load("transformers")
    assert {"transformers.BloomTokenizerFast", "transformers.GPTNeoXTokenizerFast"} <= set(GONE)
    assert "transformers.LlamaTokenizerFast" not in GONE  # still in 5.x
    assert atlas.has("4.56.2", "transformers.AutoTokenizer") and atlas.has("5.24.0", "transformers.AutoTokenizer")
    fours = [r for r in atlas.releases() if r.startswith("4.")]
    for qual, release in GONE.items():
        assert any(atlas.has(r, qual) for r in fours) and not atlas.has(release, qual) and not atlas.has("5.24.0", qual)


def test_noop():
    noop(RULE, "from transformers import BloomTokenizerFast\nt = BloomTokenizerFast.from_pretrained(p)\n",
         stack={"transformers": "4.57.6"})
    noop(RULE, "from transformers import LlamaTokenizerFast\nt = LlamaTokenizerFast.from_pretrained(p)\n")
