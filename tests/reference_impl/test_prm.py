"""`reference_impl.PRMTrainer` / `PRMConfig` (TRL 1.13's `trl.experimental.prm`, removed in TRL 1.14).

Oracles: the tokenization rule of TRL 1.13's `PRMTrainer.tokenize_row` written out again here (literal ids for one
row, and the rule composed piece by piece for the options), TRL 1.13's constructor and config fields from the atlas
(read from the wheel), and the loss as float64 cross-entropy in scalar Python on the model's logits. TRL 1.13's own
`tokenize_row` and first training step are the oracle in `test_against_trl113.py` (where TRL 1.13 is installed).
Models: a random-weight tiny `LlamaForTokenClassification` built here, the in-process tiny tokenizer.
"""

from __future__ import annotations

import copy
import math

import pytest

from . import _trainer_helpers as H

ROW = {"prompt": "one plus one", "completions": ["one plus one equals two", "so two"], "labels": [True, False]}


def _tok(tokenizer, text: str) -> list[int]:
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def token_classifier(seed: int = 0, num_labels: int = 2):
    """A tiny random-weight token-classification model (2 labels: wrong / correct step)."""
    import torch
    from transformers import AutoModelForTokenClassification

    from compat.tiny import tiny_config

    torch.manual_seed(seed)
    return AutoModelForTokenClassification.from_config(tiny_config("llama", num_labels=num_labels))


def step_dataset(n: int = 4):
    from datasets import Dataset

    rows = {"prompt": [], "completions": [], "labels": []}
    for i in range(n):
        rows["prompt"].append(H.text(i, 3 + i % 2))
        rows["completions"].append([H.text(i + 5 + k, 2 + (i + k) % 3) for k in range(1 + i % 3)])
        rows["labels"].append([(i + k) % 2 == 0 for k in range(1 + i % 3)])
    return Dataset.from_dict(rows)


def _row(tokenizer, row=ROW, sep="\n", max_length=None, max_completion_length=None, last_only=False, is_eval=False):
    from reference_impl import PRMTrainer

    return PRMTrainer.tokenize_row(row, tokenizer, sep, max_length, max_completion_length, last_only, is_eval)


# -------------------------------------------------------------------------------------------------- tokenization
def test_tokenize_row_literal_ids() -> None:
    """The rule on one row, with the ids written out: [bos] prompt | step1 sep | step2 sep, labels on the seps."""
    tokenizer = H.tokenizer("right")
    assert _tok(tokenizer, "one plus one") == [278, 76, 471, 492] and _tok(tokenizer, "\n") == [206]
    assert _tok(tokenizer, "one plus one equals two") == [278, 76, 471, 492, 487, 433]
    assert _tok(tokenizer, "so two") == [90, 86, 433] and tokenizer.bos_token_id == 2
    out = _row(tokenizer)
    assert out["input_ids"] == [2, 278, 76, 471, 492, 278, 76, 471, 492, 487, 433, 206, 90, 86, 433, 206]
    assert out["labels"] == [-100] * 11 + [1] + [-100] * 3 + [0]


def test_tokenize_row_options_follow_the_rule() -> None:
    """Multi-token separator (label on its last token), no bos, last step only (training rows only), truncation."""
    tokenizer = H.tokenizer("right")
    sep = " ; ;"
    sep_ids = _tok(tokenizer, sep)
    assert len(sep_ids) > 1
    prompt, s1, s2 = (_tok(tokenizer, t) for t in (ROW["prompt"], *ROW["completions"]))
    ids = [2] + prompt + s1 + sep_ids + s2 + sep_ids
    at1, at2 = len(prompt) + len(s1) + len(sep_ids), len(ids) - 1  # positions of the separators' last tokens
    labels = [-100] * len(ids)
    labels[at1], labels[at2] = 1, 0
    assert _row(tokenizer, sep=sep) == {"input_ids": ids, "labels": labels}

    last_only = list(labels)
    last_only[at1] = -100
    assert _row(tokenizer, sep=sep, last_only=True) == {"input_ids": ids, "labels": last_only}
    assert _row(tokenizer, sep=sep, last_only=True, is_eval=True)["labels"] == labels  # evaluation keeps every step

    n = len(s1) + 1  # cut inside the first separator: its label is lost with it
    cut = _row(tokenizer, sep=sep, max_completion_length=n)
    assert cut == {"input_ids": ids[: 1 + len(prompt) + n], "labels": [-100] * (1 + len(prompt) + n)}
    assert _row(tokenizer, sep=sep, max_length=at1 + 1) == {"input_ids": ids[: at1 + 1], "labels": labels[: at1 + 1]}

    no_bos = copy.deepcopy(tokenizer)
    no_bos.bos_token = None
    assert _row(no_bos, sep=sep) == {"input_ids": ids[1:], "labels": labels[1:]}

    with pytest.raises(ValueError):  # one label per step
        _row(tokenizer, row={**ROW, "labels": [True]})


# ---------------------------------------------------------------------------------------------- config, signature
def test_config_and_constructor_are_trl_113s() -> None:
    """Every PRMConfig field of TRL 1.13 (the atlas, read from the wheel) exists here with the same default; the
    constructor takes the same parameters in the same order."""
    import dataclasses
    import inspect

    from migrations.atlas import Atlas
    from reference_impl import PRMConfig, PRMTrainer

    atlas = Atlas.load("trl")
    theirs = {k: f.default for k, f in atlas.config_fields("1.13.0", "trl.experimental.prm.PRMConfig").items()
              if not f.origin.startswith("transformers.")}
    ours = {f.name: f.default for f in dataclasses.fields(PRMConfig)}
    for name, default in theirs.items():
        assert name in ours, name
        assert repr(ours[name]) == default or str(ours[name]) == default, (name, ours[name], default)
    params = [p.name for p in atlas.signature("1.13.0", "trl.experimental.prm.PRMTrainer").params]
    assert list(inspect.signature(PRMTrainer.__init__).parameters)[1:] == params


# ------------------------------------------------------------------------------------------------------ the loss
def _ce64(logits, labels, denominator=None) -> float:
    """float64 cross-entropy over labelled positions, in scalar Python: -sum(z_y - log sum_c exp z_c) / N."""
    total, count = 0.0, 0
    for row_z, row_y in zip(logits.double().tolist(), labels.tolist(), strict=True):
        for z, y in zip(row_z, row_y, strict=True):
            if y == -100:
                continue
            top = max(z)
            total -= z[y] - (top + math.log(sum(math.exp(v - top) for v in z)))
            count += 1
    return total / (count if denominator is None else denominator)


def test_process_reward_loss_is_float64_cross_entropy() -> None:
    """`process_reward_loss` on random logits, some positions unlabelled: the value and its gradient."""
    import torch

    from reference_impl.losses import process_reward_loss

    g = torch.Generator().manual_seed(3)
    logits = (torch.randn(3, 7, 2, generator=g) * 2).requires_grad_()
    labels = torch.randint(0, 2, (3, 7), generator=g)
    labels[:, :3] = -100
    labels[1] = -100
    mean = process_reward_loss(logits, labels)
    H.assert_close(mean.item(), _ce64(logits.detach(), labels), tol=1e-6, what="mean")
    scaled = process_reward_loss(logits, labels, num_items_in_batch=torch.tensor(20))
    H.assert_close(scaled.item(), _ce64(logits.detach(), labels, denominator=20), tol=1e-6, what="sum / N")
    (grad,) = torch.autograd.grad(scaled, logits)
    p = torch.softmax(logits.detach().double(), -1)  # d/dz of -log softmax(z)[y] = softmax(z) - onehot(y)
    expected = torch.zeros_like(p)
    for b, t in (labels != -100).nonzero().tolist():
        expected[b, t] = (p[b, t] - torch.nn.functional.one_hot(labels[b, t], 2).double()) / 20
    torch.testing.assert_close(grad.double(), expected, atol=1e-7, rtol=1e-6)


@pytest.mark.slow
def test_compute_loss_is_cross_entropy_on_the_step_tokens(tmp_path) -> None:
    import torch

    from reference_impl import PRMConfig, PRMTrainer

    model = token_classifier()
    trainer = PRMTrainer(model, args=PRMConfig(**H.config_kwargs(tmp_path)), train_dataset=step_dataset(),
                         processing_class=H.tokenizer("right"))
    batch = trainer.data_collator([trainer.train_dataset[i] for i in range(3)])
    assert (batch["labels"] != -100).sum() >= 4
    model.eval()
    with torch.no_grad():
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        mean = trainer.compute_loss(model, batch)
        scaled = trainer.compute_loss(model, batch, num_items_in_batch=torch.tensor(11))
    H.assert_close(mean.item(), _ce64(logits, batch["labels"]), tol=1e-6, what="mean over labelled tokens")
    H.assert_close(scaled.item(), _ce64(logits, batch["labels"], denominator=11), tol=1e-6, what="sum / N")


# ------------------------------------------------------------------------------------------------------ training
@pytest.mark.slow
@pytest.mark.parametrize("lora", [False, True], ids=["full", "lora"])
def test_trains_two_steps_and_evaluates(lora: bool, tmp_path) -> None:
    import reference_impl as ri

    peft = H.lora_config(task_type="TOKEN_CLS") if lora else None
    trainer = ri.PRMTrainer(token_classifier(), args=ri.PRMConfig(**H.config_kwargs(tmp_path, max_steps=2)),
                            train_dataset=step_dataset(), eval_dataset=step_dataset(3),
                            processing_class=H.tokenizer("right"), peft_config=peft)
    H.train_two_steps(trainer, lora)
    metrics = trainer.evaluate()
    assert 0.0 <= metrics["eval_accuracy"] <= 1.0 and math.isfinite(metrics["eval_loss"]), metrics


@pytest.mark.slow
def test_gradient_accumulation_matches_one_big_batch(tmp_path) -> None:
    """N counts the labelled tokens of the whole optimizer step: 2 x 2 accumulated == one batch of 4."""
    import reference_impl as ri

    logs = []
    for bs, ga in ((4, 1), (2, 2)):
        kw = H.config_kwargs(tmp_path / f"{bs}", per_device_train_batch_size=bs, gradient_accumulation_steps=ga)
        trainer = ri.PRMTrainer(token_classifier(), args=ri.PRMConfig(**kw), train_dataset=step_dataset(),
                                processing_class=H.tokenizer("right"))
        logs.append(H.first_log(trainer))
    H.assert_close(logs[1]["loss"], logs[0]["loss"], tol=1e-5, what="loss")
    H.assert_close(logs[1]["grad_norm"], logs[0]["grad_norm"], tol=1e-5, what="grad_norm")


def test_dataset_without_step_columns_is_refused(tmp_path) -> None:
    from datasets import Dataset

    from reference_impl import PRMConfig, PRMTrainer
    from reference_impl.trainers._data import DatasetFormatError

    with pytest.raises(DatasetFormatError, match="'completions', 'labels'"):
        PRMTrainer(token_classifier(), args=PRMConfig(**H.config_kwargs(tmp_path)),
                   train_dataset=Dataset.from_dict({"prompt": ["a"], "completion": ["b"]}),
                   processing_class=H.tokenizer("right"))


def test_model_and_tokenizer_load_from_a_path(tmp_path) -> None:
    """A name or path loads an `AutoModelForTokenClassification` (its saved 2 labels) and its tokenizer."""
    from reference_impl import PRMConfig, PRMTrainer

    token_classifier().save_pretrained(tmp_path / "prm")
    H.tokenizer("right").save_pretrained(tmp_path / "prm")
    trainer = PRMTrainer(str(tmp_path / "prm"), args=PRMConfig(**H.config_kwargs(tmp_path / "out")),
                         train_dataset=step_dataset(2))
    assert type(trainer.model).__name__ == "LlamaForTokenClassification" and trainer.model.config.num_labels == 2
    assert trainer.train_dataset[0]["input_ids"][0] == trainer.processing_class.bos_token_id
