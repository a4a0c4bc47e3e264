"""`removed-tokenizer-classes`: before/after and no-op cases."""

from __future__ import annotations

from migrations.atlas import Atlas
from migrations.transformers.v5_0._tokenizer_classes import GONE
from migrations.transformers.v5_0.removed_tokenizer_classes import MIGRATION as RULE
from tests.migrations._driver import check, noop, run


def test_the_issue_example():
    check(RULE, "from transformers import BloomTokenizerFast\n\ntok = BloomTokenizerFast.from_pretrained('bigscience/bloom-560m')\n",
          "from transformers import AutoTokenizer\n\ntok = AutoTokenizer.from_pretrained('bigscience/bloom-560m')\n")
    check(RULE, "from transformers.models.bloom.tokenization_bloom_fast import BloomTokenizerFast as T\n"
                "t = T.from_pretrained(p)\n",
          "from transformers import AutoTokenizer as T\nt = T.from_pretrained(p)\n")


def test_another_use_marks_the_whole_file():
    src = ("from transformers import BloomTokenizerFast\n\nt = BloomTokenizerFast.from_pretrained(p)\n"
           "assert isinstance(t, BloomTokenizerFast)\n")
    out, findings = run(RULE, src)
    assert out.startswith("# TODO(trl-compat): BloomTokenizerFast was removed in transformers 5.0")
    assert "BloomTokenizerFast.from_pretrained(p)" in out and not any(f.changed for f in findings)


def test_table_and_successor():
    atlas = Atlas.load("transformers")
    assert "transformers.BloomTokenizerFast" in GONE
    assert "transformers.LlamaTokenizerFast" not in GONE  # still in 5.x
    # 5.x's lazy modules answer `GPT2TokenizerFast` with `GPT2Tokenizer` (the one, tokenizers-backed class there):
    # not gone (mesolitica/malaya's `isinstance(tokenizer, (MBartTokenizer, MBartTokenizerFast))` keeps working)
    assert "transformers.GPT2TokenizerFast" not in GONE and "transformers.MBartTokenizerFast" not in GONE
    assert atlas.has("5.24.0", "transformers.GPT2TokenizerFast")
    assert atlas.has("4.56.2", "transformers.AutoTokenizer") and atlas.has("5.24.0", "transformers.AutoTokenizer")
    fours = [r for r in atlas.releases() if r.startswith("4.")]
    for qual, release in GONE.items():
        assert any(atlas.has(r, qual) for r in fours) and not atlas.has(release, qual) and not atlas.has("5.24.0", qual)


def test_noop():
    noop(RULE, "from transformers import BloomTokenizerFast\nt = BloomTokenizerFast.from_pretrained(p)\n",
         stack={"transformers": "4.57.6"})
    noop(RULE, "from transformers import LlamaTokenizerFast\nt = LlamaTokenizerFast.from_pretrained(p)\n")
    noop(RULE, "from transformers import GPT2TokenizerFast\nassert isinstance(t, GPT2TokenizerFast)\n")


TABLE = '''\
from transformers import (
    AutoConfig,
    AutoTokenizer,
    BloomForCausalLM,
    BloomTokenizerFast,
)

MODEL_CLASSES = {
    "bloom": (AutoConfig, BloomForCausalLM, BloomTokenizerFast),
    "auto": (AutoConfig, BloomForCausalLM, AutoTokenizer),
}
HELP = ", ".join(MODEL_CLASSES.keys())


def main(args):
    config_class, model_class, tokenizer_class = MODEL_CLASSES[args.model_type]
    tokenizer = tokenizer_class.from_pretrained(args.path, trust_remote_code=True)
    return tokenizer
'''


def test_a_model_type_table_feeding_only_from_pretrained_is_rewritten():
    # the MedicalGPT shape (corpus entries medicalgpt-2023/2024/2025)
    out, findings = run(RULE, TABLE, dedent=False)
    assert "BloomTokenizerFast" not in out and "TODO" not in out
    assert '"bloom": (AutoConfig, BloomForCausalLM, AutoTokenizer),' in out
    assert out.count("AutoTokenizer") == 3  # imported once, no second import of it (ruff F811)
    assert any(f.changed for f in findings)


def test_a_model_type_table_with_any_other_use_is_marked():
    others = [
        TABLE.replace("    return tokenizer\n", "    return isinstance(tokenizer, tokenizer_class)\n"),
        TABLE.replace('", ".join(MODEL_CLASSES.keys())', "list(MODEL_CLASSES.values())"),
        TABLE.replace("config_class, model_class, tokenizer_class = MODEL_CLASSES[args.model_type]",
                      "classes = MODEL_CLASSES[args.model_type]\n    tokenizer_class = classes[2]"),
        TABLE.replace("config_class, model_class, tokenizer_class = ", "config_class, tokenizer_class, model_class = "),
        TABLE.replace("HELP = ", "MODEL_CLASSES = {}\nHELP = "),
    ]
    for src in others:
        out, findings = run(RULE, src, dedent=False)
        assert "# TODO(trl-compat): BloomTokenizerFast was removed in transformers 5.0" in out, src
        assert '"bloom": (AutoConfig, BloomForCausalLM, BloomTokenizerFast),' in out
        assert not any(f.changed for f in findings)
