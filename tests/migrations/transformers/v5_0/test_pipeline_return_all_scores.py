"""`pipeline-return-all-scores`: before/after, markers and no-op cases; the migrated TRL sentiment reward run on the
installed transformers (5.x) against the 4.x answer written out from the model's logits; the 4.56.2 wheel's source
read for the behaviour the rule keeps."""

from __future__ import annotations

import math
import zipfile
from pathlib import Path

import pytest

from migrations.transformers.v5_0.pipeline_return_all_scores import MIGRATION as RULE
from tests.migrations._driver import check, noop, run

WHEELS = Path(__file__).resolve().parents[4] / ".cache" / "wheels"

# TRL 0.4 - 0.19's examples/scripts/ppo.py (and the sentiment notebooks): kwargs in a dict, read as output[1]
TRL_EXAMPLE = """\
    from transformers import pipeline

    sent_kwargs = {"return_all_scores": True, "function_to_apply": "none", "batch_size": 16}
    sentiment_pipe = pipeline("sentiment-analysis", model=reward_model, device=device)
    generator = pipeline("text-generation", model="gpt2")


    def reward_fn(prompts, completions, **kwargs):
        outputs = sentiment_pipe([p + c for p, c in zip(prompts, completions)], **sent_kwargs)
        return [output[1]["score"] for output in outputs]
    """


def test_the_trl_sentiment_example_gets_the_wrapper():
    check(RULE, TRL_EXAMPLE, TRL_EXAMPLE.replace(
        "from transformers import pipeline\n",
        "from transformers import pipeline\n    from compat.trl import with_return_all_scores\n").replace(
        'sentiment_pipe = pipeline("sentiment-analysis", model=reward_model, device=device)',
        'sentiment_pipe = with_return_all_scores(pipeline("sentiment-analysis", model=reward_model, device=device))'))


def test_a_keyword_given_at_construction_moves_to_the_wrapper():
    check(RULE, """\
        import transformers
        from transformers import TextClassificationPipeline as TCP

        rm = transformers.pipeline(task="text-classification", model=path, return_all_scores=True, top_k=None)
        other = TCP(model=m, tokenizer=t, return_all_scores=flag)
        """, """\
        import transformers
        from transformers import TextClassificationPipeline as TCP
        from compat.trl import with_return_all_scores

        rm = with_return_all_scores(transformers.pipeline(task="text-classification", model=path, top_k=None), return_all_scores=True)
        other = with_return_all_scores(TCP(model=m, tokenizer=t), return_all_scores=flag)
        """)


def test_a_use_without_a_pipeline_built_here_is_marked():
    out, findings = run(RULE, """\
        def reward(pipe, texts):
            kwargs = {}
            kwargs["return_all_scores"] = True
            return pipe(texts, return_all_scores=True, function_to_apply="none")
        """)
    assert out.count("# TODO(trl-compat): wrap this pipeline where it is built") == 2
    assert [f.line for f in findings if f.severity == "manual"] == [3, 4]


def test_noops():
    noop(RULE, TRL_EXAMPLE, stack={"transformers": "4.57.6"})  # 4.x still reads it
    noop(RULE, "from transformers import pipeline\np = pipeline('sentiment-analysis')\nprint(p(x, top_k=None))\n")
    # the project's own parameter of that name; a string mentioning it; another task's pipeline
    noop(RULE, "def score(texts, return_all_scores=False):\n    return texts\n\n\n"
               "score(t, return_all_scores=True)\nprint('return_all_scores=True')\n")
    noop(RULE, "from transformers import pipeline\ng = pipeline('text-generation')\n"
               "def score(texts, return_all_scores=False):\n    return texts\n\n\nscore(t, return_all_scores=True)\n")


def test_a_module_binding_the_helper_name_is_marked_not_rewritten():
    out, findings = run(RULE, "from transformers import pipeline\nfrom mylib import with_return_all_scores\n"
                              "p = pipeline('sentiment-analysis', return_all_scores=True)\n")
    assert "p = pipeline('sentiment-analysis', return_all_scores=True)" in out
    assert any(f.severity == "manual" for f in findings)


def test_the_migrated_reward_runs_as_on_transformers_4(tmp_path):
    """The rewritten TRL example run for real (tiny random classifier, tokenizer trained in-process): the rewards are
    the positive label's logits, as 4.x returned them (written out here from the model in float64)."""
    torch = pytest.importorskip("torch")
    from compat.tiny import tiny_model, tiny_tokenizer

    out, _ = run(RULE, TRL_EXAMPLE)
    model = tiny_model("sequence-classification", num_labels=2, seed=5)
    tokenizer = tiny_tokenizer()
    model.config.pad_token_id = tokenizer.pad_token_id
    import transformers

    def pipeline(task, model=None, **kwargs):  # the example's model ids stand for the tiny parts
        if task == "text-generation":
            return object()
        return transformers.pipeline(task, model=model, tokenizer=tokenizer, **kwargs)

    scope = {"reward_model": model, "device": "cpu", "pipeline": pipeline, "__name__": "migrated"}
    exec(compile(out.replace("from transformers import pipeline\n", ""), "migrated.py", "exec"), scope)
    prompts, completions = ["a good", "a bad"], [" film", " plot and a long one"]
    rewards = scope["reward_fn"](prompts, completions)
    with torch.no_grad():
        want = [model(**tokenizer([p + c], return_tensors="pt")).logits[0, 1].double().item()
                for p, c in zip(prompts, completions)]
    assert rewards == pytest.approx(want, abs=1e-5)
    assert not any(math.isnan(r) for r in rewards)


def test_transformers_4_read_the_keyword_as_the_rule_says():
    wheel = next(WHEELS.glob("transformers-4.56.2-*.whl"), None)
    if wheel is None:
        pytest.skip("the transformers 4.56.2 wheel is not cached (make .cache/wheels/.downloaded)")
    src = zipfile.ZipFile(wheel).read("transformers/pipelines/text_classification.py").decode()
    assert "def _sanitize_parameters(self, return_all_scores=None" in src
    assert 'postprocess_params["top_k"] = None' in src  # True: every label ...
    assert "if not _legacy:\n            dict_scores.sort(" in src  # ... sorted only for top_k callers
    assert "return [result]" in src  # a single string nested in one more list
