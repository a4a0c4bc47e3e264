"""`sft-batched-formatting-func`: before/after, no-op cases, and the helper held against TRL <= 0.15's batched call
(the oracle: the same function on the whole batch, as `dataset.map(..., batched=True)` gave it) and the wheels."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from migrations.v0_16.sft_batched_formatting_func import MIGRATION as RULE
from tests.migrations._driver import check, noop, run

# TRL's own docs of the 0.7 - 0.15 era, copied into Elfsong/DebiasODE src/trainer.py and many more
BATCHED = """\
from trl import SFTTrainer


def formatting_prompts_func(example):
    output_texts = []
    for i in range(len(example["question"])):
        text = f"### Question: {example['question'][i]}\\n ### Answer: {example['answer'][i]}"
        output_texts.append(text)
    return output_texts


trainer = SFTTrainer(model, args=args, train_dataset=ds, formatting_func=formatting_prompts_func)
"""


def test_a_function_returning_a_list_is_wrapped():
    check(RULE, BATCHED, BATCHED.replace("from trl import SFTTrainer\n",
                                         "from trl import SFTTrainer\nfrom compat.trl import batched_formatting\n")
          .replace("formatting_func=formatting_prompts_func)",
                   "formatting_func=batched_formatting(formatting_prompts_func))"))
    # a comprehension, inside a function that builds the trainer
    check(RULE, """\
        from trl import SFTTrainer

        def train(ds):
            def fmt(batch):
                return [f"{q} {a}" for q, a in zip(batch["q"], batch["a"])]
            return SFTTrainer(model, train_dataset=ds, formatting_func=fmt)
    """, """\
        from trl import SFTTrainer
        from compat.trl import batched_formatting

        def train(ds):
            def fmt(batch):
                return [f"{q} {a}" for q, a in zip(batch["q"], batch["a"])]
            return SFTTrainer(model, train_dataset=ds, formatting_func=batched_formatting(fmt))
    """)


def test_noops():
    # per example already (a string), chat messages, a name bound twice, a lambda, not TRL's trainer
    noop(RULE, "from trl import SFTTrainer\ndef f(x):\n    return x['a'] + x['b']\nSFTTrainer(m, formatting_func=f)\n")
    noop(RULE, "from trl import SFTTrainer\ndef f(x):\n    return [{'role': 'user', 'content': x['q']}]\n"
               "SFTTrainer(m, formatting_func=f)\n")
    noop(RULE, "from trl import SFTTrainer\ndef f(x):\n    out = []\n    out = x['t']\n    return out\n"
               "SFTTrainer(m, formatting_func=f)\n")
    noop(RULE, "from trl import SFTTrainer\nSFTTrainer(m, formatting_func=lambda b: [t for t in b['t']])\n")
    noop(RULE, "from mylib import SFTTrainer\ndef f(b):\n    return [t for t in b['t']]\nSFTTrainer(m, formatting_func=f)\n")
    noop(RULE, "from trl import SFTTrainer\ndef f(b):\n    return [t for t in b['t']]\nprint('formatting_func=f')\n")


def test_the_helper_name_taken_is_marked():
    out, _ = run(RULE, BATCHED.replace("trainer = ", "batched_formatting = None\ntrainer = "))
    assert "# TODO(trl-compat): formatting_prompts_func returns a list" in out
    assert "formatting_func=formatting_prompts_func)" in out


def test_the_wrapped_function_gives_each_row_what_the_batched_call_gave():
    """The oracle is the old call itself: `dataset.map(..., batched=True)` hands the function a batch and takes its
    list; the wrapper, called per row as TRL 0.16+ does (`batched=False`), must give each row's string."""
    from datasets import Dataset

    import compat.trl

    namespace: dict = {}
    exec(BATCHED.split("\n\n\ntrainer")[0].replace("from trl import SFTTrainer\n", ""), namespace)  # noqa: S102
    fmt = namespace["formatting_prompts_func"]
    ds = Dataset.from_dict({"question": ["2+2?", "capital of France?", "é?"], "answer": ["4", "Paris", "e"]})
    old = ds.map(lambda batch: {"text": fmt(batch)}, batched=True, batch_size=2)["text"]
    new = ds.map(lambda row: {"text": compat.trl.batched_formatting(fmt)(row)}, batched=False)["text"]
    assert new == old == ["### Question: 2+2?\n ### Answer: 4", "### Question: capital of France?\n ### Answer: Paris",
                          "### Question: é?\n ### Answer: e"]
    with pytest.raises(ValueError, match="one string per row"):
        compat.trl.batched_formatting(lambda batch: ["a", "b"])({"q": "x"})


def test_the_call_form_changed_in_trl_0_16():
    """Read in the wheels: 0.12.2 / 0.13.0 require a list back from the batched call, 0.19.1 maps per example."""
    folder = Path(os.environ.get("TRL_COMPAT_WHEELS", Path(__file__).resolve().parents[3] / ".cache" / "wheels"))
    sources = {}
    for version in ("0.12.2", "0.13.0", "0.19.1"):
        wheel = folder / f"trl-{version}-py3-none-any.whl"
        if not wheel.exists():
            pytest.skip(f"no TRL {version} wheel at {wheel}")
        sources[version] = zipfile.ZipFile(wheel).read("trl/trainer/sft_trainer.py").decode()
    for version in ("0.12.2", "0.13.0"):
        assert "The `formatting_func` should return a list of processed strings" in sources[version]
    new = sources["0.19.1"]
    assert 'return {"text": formatting_func(example)}' in new
    assert "dataset = dataset.map(_func, batched=False" in new
