"""`compat.trl.DataCollatorForCompletionOnlyLM` / `ConstantLengthDataset` (copies of TRL 0.19.1's) against oracles.

The expected label masks and packed blocks below are written out by hand from TRL 0.19.1's documented behaviour
(`trl/trainer/utils.py` of the 0.19.1 wheel) for small token-id inputs; the tokenizer is the in-process one of
`compat.tiny` (ids 0-7 are its special tokens: 0 pad, 1 eos), the model a tiny random one.
"""

from __future__ import annotations

import itertools
import random
import warnings

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

import datasets

from compat.tiny import tiny_tokenizer

M = -100  # the ignore index


@pytest.fixture(scope="module")
def tok():
    return tiny_tokenizer(padding_side="right")


def _collator(tok, *args, **kwargs):
    import compat.trl

    return compat.trl.DataCollatorForCompletionOnlyLM(*args, tokenizer=tok, **kwargs)


def _rows(*ids):
    return [{"input_ids": list(r)} for r in ids]


# -- DataCollatorForCompletionOnlyLM ------------------------------------------------------------------------------


def test_single_turn_masks_through_the_last_response_template(tok):
    coll = _collator(tok, [30, 31])
    with pytest.warns(UserWarning, match=r"Could not find response key `\[30, 31\]`"):
        batch = coll(_rows([20, 30, 31, 40, 41], [30, 31, 42], [20, 30, 31, 43, 30, 31, 44], [20, 21]))
    assert batch["input_ids"].tolist()[1] == [30, 31, 42, 0, 0, 0, 0]
    assert batch["labels"].tolist() == [
        [M, M, M, 40, 41, M, M],  # padding is -100 (transformers' collator), the prompt through the template too
        [M, M, 42, M, M, M, M],
        [M, M, M, M, M, M, 44],  # the last occurrence wins
        [M, M, M, M, M, M, M],  # no template: the whole row is ignored (with the warning)
    ]


def test_multi_turn_masks_each_instruction_up_to_its_response(tok):
    coll = _collator(tok, [30, 31], instruction_template=[20, 21])
    batch = coll(_rows(
        [20, 21, 40, 30, 31, 41, 42, 20, 21, 43, 30, 31, 44],  # two turns
        [30, 31, 50, 20, 21, 51, 30, 31, 52],  # opens with a response: masked from 0 up to it
        [20, 21, 60, 30, 31, 61, 20, 21, 62],  # a trailing instruction without a response
    ))
    assert batch["labels"].tolist() == [
        [M, M, M, M, M, 41, 42, M, M, M, M, M, 44],
        [M, M, 50, M, M, M, M, M, 52, M, M, M, M],
        [M, M, M, M, M, 61, M, M, M, M, M, M, M],
    ]


def test_multi_turn_without_either_template_ignores_the_row(tok):
    coll = _collator(tok, [30, 31], instruction_template=[20, 21])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        batch = coll(_rows([30, 31, 70], [20, 21, 80]))
    messages = [str(w.message) for w in caught]
    assert any(m.startswith("Could not find instruction key `[20, 21]`") for m in messages)
    assert any(m.startswith("Could not find response key `[30, 31]`") for m in messages)
    assert batch["labels"].tolist() == [[M, M, M], [M, M, M]]


def test_string_template_is_tokenized_without_special_tokens(tok):
    template = "### Answer:"
    ids = tok.encode(template, add_special_tokens=False)
    answer = tok.encode(" good fun", add_special_tokens=False)
    coll = _collator(tok, template)
    assert coll.response_token_ids == ids
    row = [20, 21, *ids, *answer]
    labels = coll(_rows(row))["labels"].tolist()[0]
    assert labels == [M] * (2 + len(ids)) + answer


def test_ignore_index_applies_to_the_masked_prompt_not_to_padding(tok):
    coll = _collator(tok, [30, 31], ignore_index=-1)
    batch = coll(_rows([20, 30, 31, 40], [30, 31]))
    assert batch["labels"].tolist() == [[-1, -1, -1, 40], [-1, -1, M, M]]


def test_padding_free_flattens_with_positions_and_sequence_bounds(tok):
    coll = _collator(tok, [30, 31], padding_free=True)
    batch = coll(_rows([20, 30, 31, 40], [30, 31, 41]))
    assert "attention_mask" not in batch
    assert batch["input_ids"].tolist() == [[20, 30, 31, 40, 30, 31, 41]]
    assert batch["position_ids"].tolist() == [[0, 1, 2, 3, 0, 1, 2]]
    assert batch["labels"].tolist() == [[M, M, M, 40, M, M, 41]]
    assert batch["cu_seq_lens_q"].tolist() == [[0, 4, 7]] == batch["cu_seq_lens_k"].tolist()
    assert batch["max_length_q"].tolist() == [4] == batch["max_length_k"].tolist()


def test_pad_equal_to_eos_warns_for_multi_turn(tok):
    import copy

    same = copy.deepcopy(tok)
    same.pad_token = same.eos_token
    with pytest.warns(UserWarning, match="pad_token_id and eos_token_id values of this tokenizer are identical"):
        _collator(same, [30, 31], instruction_template=[20, 21])
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        _collator(same, [30, 31])  # single turn: no warning


def test_incoming_labels_are_rebuilt_from_input_ids(tok):
    coll = _collator(tok, [30, 31])
    batch = coll([{"input_ids": [20, 30, 31, 40], "labels": [1, 2, 3, 4]}, {"input_ids": [30, 31], "labels": [5]}])
    assert batch["labels"].tolist() == [[M, M, M, 40], [M, M, M, M]]


def test_is_a_transformers_language_modeling_collator(tok):
    from transformers import DataCollatorForLanguageModeling

    coll = _collator(tok, [30, 31])
    assert isinstance(coll, DataCollatorForLanguageModeling) and coll.mlm is False


# -- ConstantLengthDataset ----------------------------------------------------------------------------------------

_ROWS = [[20, 21, 22], [23, 24], [25, 26, 27, 28, 29], [30]]


def _cld(tok, rows=_ROWS, **kwargs):
    import compat.trl

    ds = datasets.Dataset.from_dict({"input_ids": rows})
    kwargs.setdefault("shuffle", False)
    return compat.trl.ConstantLengthDataset(tok, ds, formatting_func=lambda x: x["input_ids"], seq_length=4,
                                            num_of_sequences=2, **kwargs)


def _blocks(ds, n=None):
    return [ex["input_ids"].tolist() for ex in itertools.islice(iter(ds), n)]


def test_pretokenized_rows_are_joined_by_eos_and_cut_into_full_blocks(tok):
    # buffer of 4 * 2 tokens: rows 0-2 (10 tokens) -> 20 21 22 E 23 24 E 25 26 27 28 29 E -> three blocks, "E" dropped;
    # then row 3 alone -> 30 E -> no full block
    ds = _cld(tok)
    out = list(iter(ds))
    assert [ex["input_ids"].tolist() for ex in out] == [[20, 21, 22, 1], [23, 24, 1, 25], [26, 27, 28, 29]]
    assert all(ex["labels"].tolist() == ex["input_ids"].tolist() for ex in out)
    assert out[0]["input_ids"].dtype.is_floating_point is False and ds.current_size == 3
    assert len(ds) == 4


def test_without_concat_token(tok):
    assert _blocks(_cld(tok, append_concat_token=False)) == [[20, 21, 22, 23], [24, 25, 26, 27]]


def test_infinite_restarts_the_dataset(tok):
    assert _blocks(_cld(tok, infinite=True), 6) == [
        [20, 21, 22, 1], [23, 24, 1, 25], [26, 27, 28, 29],
        [30, 1, 20, 21], [22, 1, 23, 24], [1, 25, 26, 27],  # row 3, then rows 0-2 again, "28 29 E" dropped
    ]


def test_eos_fallback_when_the_tokenizer_has_none(tok):
    import copy

    no_eos = copy.deepcopy(tok)
    no_eos.eos_token = None
    assert _blocks(_cld(no_eos, eos_token_id=9)) == [[20, 21, 22, 9], [23, 24, 9, 25], [26, 27, 28, 29]]


def test_text_rows_are_tokenized_with_the_tokenizer(tok):
    import compat.trl

    texts = ["the movie was good", "a film", "i love the quick brown fox"]
    ds = compat.trl.ConstantLengthDataset(tok, datasets.Dataset.from_dict({"text": texts}), dataset_text_field="text",
                                          seq_length=5, num_of_sequences=100, shuffle=False)
    stream = [t for text in texts for t in [*tok(text)["input_ids"], tok.eos_token_id]]
    expected = [stream[k: k + 5] for k in range(0, len(stream) - len(stream) % 5, 5)]
    assert _blocks(ds) == expected and expected


def test_shuffle_permutes_whole_rows_and_blocks(tok):
    # rows of 3 tokens + EOS = one block each; buffers of 8 tokens take 3 rows (3, 6, 9 tokens): 3 + 3 + 2 blocks
    rows = [[20 + i] * 3 for i in range(8)]
    in_order = [[20 + i] * 3 + [1] for i in range(8)]
    assert _blocks(_cld(tok, rows=rows)) == in_order
    random.seed(0)
    shuffled = _blocks(_cld(tok, rows=rows, shuffle=True))
    assert sorted(shuffled) == in_order and shuffled != in_order
    # shuffling stays inside each buffer: rows 0-2 come out first, 6-7 last
    assert sorted(b[0] for b in shuffled[:3]) == [20, 21, 22] and sorted(b[0] for b in shuffled[6:]) == [26, 27]


def test_arguments_are_checked(tok):
    import compat.trl

    ds = datasets.Dataset.from_dict({"text": ["a"]})
    with pytest.raises(ValueError, match="Either `dataset_text_field` or `formatting_func` should be provided"):
        compat.trl.ConstantLengthDataset(tok, ds)
    with pytest.warns(UserWarning, match="Only one of `dataset_text_field` and `formatting_func`"):
        compat.trl.ConstantLengthDataset(tok, ds, dataset_text_field="text", formatting_func=lambda x: x["text"])


def test_is_a_datasets_iterable_dataset_with_token_features(tok):
    import torch

    ds = _cld(tok)
    assert isinstance(ds, datasets.IterableDataset) and isinstance(ds, torch.utils.data.IterableDataset)
    assert ds.column_names == ["input_ids", "labels"]
    # what datasets' own iteration (TRL's map calls) sees: the same blocks, as lists
    mapped = ds.map(lambda ex: {"n": len(ex["input_ids"])})
    assert [(ex["input_ids"], ex["n"]) for ex in mapped] == [(b, 4) for b in _blocks(ds)]


# -- with TRL 1.16's SFTTrainer -----------------------------------------------------------------------------------


def _sft_args(tmp_path):
    from trl import SFTConfig

    return SFTConfig(output_dir=str(tmp_path), max_steps=1, per_device_train_batch_size=2, report_to="none",
                     use_cpu=True, save_strategy="no", logging_steps=1, disable_tqdm=True)


@pytest.mark.slow
@pytest.mark.trl
def test_sft_trainer_trains_with_the_collator(tok, tmp_path):
    import math

    from trl import SFTTrainer

    from compat.tiny import tiny_model

    texts = [f"the movie was {w} ### Answer: {w} yes" for w in ("good", "bad fun great", "fun", "great the movie")]
    coll = _collator(tok, "### Answer:")
    seen = []
    real = coll.torch_call
    coll.torch_call = lambda ex: seen.append(real(ex)) or seen[-1]
    trainer = SFTTrainer(model=tiny_model(), args=_sft_args(tmp_path), processing_class=tok, data_collator=coll,
                         train_dataset=datasets.Dataset.from_dict({"text": texts}))
    loss = trainer.train().training_loss
    assert math.isfinite(loss) and seen
    template = tok.encode("### Answer:", add_special_tokens=False)
    for ids, labels in zip(seen[0]["input_ids"].tolist(), seen[0]["labels"].tolist()):
        cut = max(i for i in range(len(ids)) if ids[i: i + len(template)] == template) + len(template)
        assert labels[:cut] == [M] * cut
        assert [x for x in labels[cut:] if x != M] == [t for t in ids[cut:] if t != tok.pad_token_id]


@pytest.mark.slow
@pytest.mark.trl
def test_sft_trainer_trains_on_the_packed_dataset(tok, tmp_path):
    import math

    from trl import SFTTrainer

    import compat.trl
    from compat.tiny import tiny_model

    texts = ["the movie was good and fun", "a film about a cat", "i love the quick brown fox", "yes no maybe"] * 2
    packed = compat.trl.ConstantLengthDataset(tok, datasets.Dataset.from_dict({"text": texts}),
                                              dataset_text_field="text", seq_length=8, num_of_sequences=4)
    trainer = SFTTrainer(model=tiny_model(), args=_sft_args(tmp_path), processing_class=tok, train_dataset=packed)
    batch = next(iter(trainer.get_train_dataloader()))
    assert batch["input_ids"].shape == (2, 8)
    assert math.isfinite(trainer.train().training_loss)


# -- the script-argument dataclasses (TRL 0.12.2) -----------------------------------------------------------------


@pytest.mark.parametrize("name", ["SFTScriptArguments", "DPOScriptArguments", "RewardScriptArguments"])
def test_script_arguments_parse_like_trl_0_12_2(name, tmp_path):
    import dataclasses

    from trl import TrlParser

    import compat.trl

    cls = getattr(compat.trl, name)
    # TRL 0.12.2's ScriptArguments, written out: (field, default); dataset_name has none; `config` left out (TRL
    # 1.16's TrlParser reserves it and reads --config itself)
    assert [(f.name, f.default) for f in dataclasses.fields(cls)] == [
        ("dataset_name", dataclasses.MISSING), ("dataset_train_split", "train"), ("dataset_test_split", "test"),
        ("gradient_checkpointing_use_reentrant", False), ("ignore_bias_buffers", False),
    ]
    (tmp_path / "c.yaml").write_text("dataset_train_split: tr\nignore_bias_buffers: true\n")
    (args,) = TrlParser((cls,)).parse_args_and_config(
        ["--dataset_name", "d", "--gradient_checkpointing_use_reentrant", "true", "--dataset_test_split", "dev",
         "--config", str(tmp_path / "c.yaml")])
    assert args == cls(dataset_name="d", dataset_train_split="tr", dataset_test_split="dev",
                       gradient_checkpointing_use_reentrant=True, ignore_bias_buffers=True)
    with pytest.raises(SystemExit):
        TrlParser((cls,)).parse_args_and_config([])  # dataset_name is required, as in 0.12.2


# -- TRL 0.8's SftScriptArguments / DpoScriptArguments, without the fields the configs hold now ------------------


@pytest.mark.parametrize("name, config, argv, moved", [
    ("SftScriptArguments", "SFTConfig",
     ["--dataset_text_field", "t", "--packing", "true", "--max_seq_length", "128"],
     {"dataset_text_field": "t", "packing": True}),
    ("DpoScriptArguments", "DPOConfig",
     ["--beta", "0.3", "--max_length", "256", "--max_prompt_length", "64", "--sanity_check", "true"],
     {"beta": 0.3, "max_length": 256}),
])
def test_0_8_script_arguments_parse_beside_the_config(name, config, argv, moved):
    # the migrated 0.8 examples/scripts/sft.py / dpo.py: one TrlParser over the copy, the config and ModelConfig;
    # the old options all still parse, the moved ones into the config (TRL 1.16 here)
    import trl

    import compat.trl

    cls = getattr(compat.trl, name)
    parser = trl.TrlParser((cls, getattr(trl, config), trl.ModelConfig))
    args, training_args, _ = parser.parse_args_and_config(["--output_dir", "o", "--bf16", "false", *argv])
    assert {k: getattr(training_args, k) for k in moved} == moved
    assert not set(moved) & {f.name for f in __import__("dataclasses").fields(cls)}
    if name == "SftScriptArguments":
        assert (args.max_seq_length, args.dataset_name, args.dataset_train_name) == (
            128, "timdettmers/openassistant-guanaco", "train")
    else:
        assert (args.max_prompt_length, args.sanity_check, args.max_target_length, args.dataset_name) == (
            64, True, 128, None)


def test_chat_arguments_are_the_0_12_2_dataclass_without_config(tmp_path):
    import ast
    import dataclasses

    from trl import TrlParser

    import compat.trl
    from migrations.atlas import Atlas

    old = Atlas.load("trl").config_fields("0.12.2", "trl.commands.cli_utils.ChatArguments")
    cls = compat.trl.ChatArguments
    copy = {f.name: f for f in dataclasses.fields(cls)}
    assert list(copy) == [n for n in old if n != "config"]
    for name, f in copy.items():
        want = dataclasses.MISSING if old[name].default is None else ast.literal_eval(old[name].default)
        assert f.default == want, name
    # the 0.11-0.12 chat.py: `--config FILE` appended to the command line, `examples` (a mapping) read from it
    (tmp_path / "chat.yaml").write_text("examples:\n  llama:\n    text: hi\nmax_new_tokens: 8\n")
    (args,) = TrlParser(cls).parse_args_and_config(
        ["--model_name_or_path", "m", "--torch_dtype", "bfloat16", "--config", str(tmp_path / "chat.yaml")])
    assert (args.examples, args.max_new_tokens, args.torch_dtype) == ({"llama": {"text": "hi"}}, 8, "bfloat16")
    with pytest.raises(SystemExit):
        TrlParser(cls).parse_args_and_config(["--model_name_or_path", "m", "--torch_dtype", "int8"])  # choices kept
