"""`compat.trl.with_return_all_scores`: a real text-classification pipeline (tiny random model, tokenizer trained
in-process) answering transformers 4.x's `return_all_scores=`.

The oracle is the 4.x answer written out from the model's own logits in float64: every label's score in label-id
order (`function_to_apply="none"`: the logits; the default for several labels: their softmax), a single string's row
nested in one more list. Where the installed transformers still takes the keyword (4.x: the `floor` tox env, 4.56.2)
the wrapper is also held against the pipeline's own answer. On 5.x the test also shows why the wrapper exists: the
plain pipeline ignores the keyword and answers the top label only.
"""

from __future__ import annotations

import inspect
import math

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from compat.tiny import tiny_model, tiny_tokenizer  # noqa: E402
from compat.trl import with_return_all_scores  # noqa: E402

LABELS = {0: "NEGATIVE", 1: "POSITIVE", 2: "MIXED"}  # label order is not alphabetical, nor by score
TEXTS = ["a good film", "a bad film with a long plot"]
NATIVE = "return_all_scores" in inspect.signature(
    transformers.TextClassificationPipeline._sanitize_parameters).parameters


@pytest.fixture(scope="module")
def parts():
    model = tiny_model("sequence-classification", num_labels=3, seed=3)
    model.config.id2label = dict(LABELS)
    model.config.label2id = {v: k for k, v in LABELS.items()}
    tokenizer = tiny_tokenizer()
    model.config.pad_token_id = tokenizer.pad_token_id
    return model, tokenizer


def _pipe(parts, **kwargs):
    model, tokenizer = parts
    return transformers.pipeline("sentiment-analysis", model=model, tokenizer=tokenizer, device="cpu", **kwargs)


def _oracle(parts, text: str, softmax: bool) -> list[dict]:
    model, tokenizer = parts
    with torch.no_grad():
        logits = model(**tokenizer([text], return_tensors="pt")).logits[0].double().tolist()
    if softmax:
        top = max(logits)
        exp = [math.exp(v - top) for v in logits]
        logits = [v / sum(exp) for v in exp]
    return [{"label": LABELS[i], "score": v} for i, v in enumerate(logits)]


def _same(got, want) -> None:
    assert [[d["label"] for d in row] for row in got] == [[d["label"] for d in row] for row in want]
    for g_row, w_row in zip(got, want):
        for g, w in zip(g_row, w_row):
            assert g["score"] == pytest.approx(w["score"], abs=1e-5)


def test_every_label_in_label_order_as_transformers_4_gave(parts):
    pipe = with_return_all_scores(_pipe(parts))
    kwargs = {"return_all_scores": True, "function_to_apply": "none", "batch_size": 2}  # TRL's sentiment examples
    out = pipe(TEXTS, **kwargs)
    _same(out, [_oracle(parts, t, softmax=False) for t in TEXTS])
    positive = [row[1]["score"] for row in out]  # what the PPO-era reward code reads
    assert positive == pytest.approx([_oracle(parts, t, False)[1]["score"] for t in TEXTS], abs=1e-5)
    single = pipe(TEXTS[0], return_all_scores=True)  # one string: its row in one more list; softmax by default
    assert len(single) == 1
    _same(single, [_oracle(parts, TEXTS[0], softmax=True)])


def test_a_default_given_at_construction(parts):
    pipe = with_return_all_scores(_pipe(parts), return_all_scores=True)
    _same(pipe(TEXTS), [_oracle(parts, t, softmax=True) for t in TEXTS])
    assert pipe(TEXTS, return_all_scores=False) == _pipe(parts)(TEXTS)  # a call's own value wins


def test_calls_without_the_keyword_or_with_top_k_are_unchanged(parts):
    plain, wrapped = _pipe(parts), with_return_all_scores(_pipe(parts))
    assert wrapped(TEXTS) == plain(TEXTS)
    assert wrapped(TEXTS[0]) == plain(TEXTS[0])
    assert wrapped(TEXTS, return_all_scores=False) == plain(TEXTS)
    # 4.x: top_k given, return_all_scores is not read
    assert wrapped(TEXTS, return_all_scores=True, top_k=2) == plain(TEXTS, top_k=2)
    assert isinstance(wrapped, transformers.TextClassificationPipeline)
    assert type(wrapped).__name__ == "TextClassificationPipeline"


def test_a_pipeline_built_with_top_k_keeps_the_score_order(parts):
    """4.x: a pipeline built with `top_k=` holds non-legacy parameters, so `return_all_scores=True` at a call gave
    every label sorted by score (a single string still nested)."""
    pipe = with_return_all_scores(_pipe(parts, top_k=1))
    out = pipe(TEXTS, return_all_scores=True, function_to_apply="none")
    want = [sorted(_oracle(parts, t, softmax=False), key=lambda d: -d["score"]) for t in TEXTS]
    _same(out, want)
    assert len(pipe(TEXTS[0], return_all_scores=True)) == 1


@pytest.mark.skipif(not NATIVE, reason="transformers 5 has no return_all_scores to compare with")
def test_the_same_as_the_pipelines_own_answer_on_transformers_4(parts):
    plain, wrapped = _pipe(parts), with_return_all_scores(_pipe(parts))
    for call in ({"return_all_scores": True}, {"return_all_scores": True, "function_to_apply": "none"}):
        assert wrapped(TEXTS, **call) == plain(TEXTS, **call)
        assert wrapped(TEXTS[0], **call) == plain(TEXTS[0], **call)
    built = _pipe(parts, return_all_scores=True)
    assert with_return_all_scores(_pipe(parts), return_all_scores=True)(TEXTS) == built(TEXTS)
    ranked = _pipe(parts, top_k=1)
    assert with_return_all_scores(_pipe(parts, top_k=1))(TEXTS, return_all_scores=True) == \
        ranked(TEXTS, return_all_scores=True)


@pytest.mark.skipif(NATIVE, reason="transformers 4.x still reads return_all_scores")
def test_transformers_5_ignores_the_keyword_without_the_wrapper(parts):
    out = _pipe(parts)(TEXTS, return_all_scores=True, function_to_apply="none")
    assert all(isinstance(row, dict) for row in out)  # the top label only: row[1] is a KeyError
    with pytest.raises(KeyError):
        [row[1]["score"] for row in out]


def test_other_pipelines_are_returned_as_they_are(parts):
    model, tokenizer = tiny_model(), tiny_tokenizer()
    gen = transformers.pipeline("text-generation", model=model, tokenizer=tokenizer, device="cpu")
    cls = type(gen)
    assert with_return_all_scores(gen) is gen and type(gen) is cls
