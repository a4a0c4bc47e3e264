"""`compat.trl`'s copies of removed `trl.trainer.utils` / `trl.import_utils` / `trl.trainer.dpo_config` names held
against TRL's own code of the last release that had them (a differential test).

Old TRL cannot be installed beside TRL 1.x, so each definition is read out of its wheel (parsed with `ast`; nothing
else of the module runs) and executed with the names it uses: the PPOv2 generation helpers from 0.26.2 (also compared
with 1.12.0's `trl.experimental.ppo.ppo_trainer` source), `PeftSavingCallback` from 0.7.4, `FDivergenceConstants`
from 0.28.0, `is_torch_greater_2_0` from 0.11.4. The wheels come from `$TRL_COMPAT_WHEELS` or the shared cache
`/work/cache/wheels`; a missing wheel skips its test.
"""

from __future__ import annotations

import ast
import importlib.metadata
import os
import sys
import types
import typing
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("torch")

import numpy as np
import torch
import transformers
from transformers.utils import ModelOutput

import compat.trl
from compat.tiny import tiny_model

_WHEELS = Path(os.environ.get("TRL_COMPAT_WHEELS", "/work/cache/wheels"))


def _source(version: str, path: str) -> str:
    wheel = _WHEELS / f"trl-{version}-py3-none-any.whl"
    if not wheel.is_file():
        pytest.skip(f"no TRL {version} wheel at {wheel}")
    return zipfile.ZipFile(wheel).read(path).decode("utf-8")


def _definitions(version: str, path: str, names: set[str], namespace: dict[str, typing.Any]) -> dict[str, typing.Any]:
    """`names` as TRL `version` defined them at the top level of `path`, executed in `namespace`."""
    source = _source(version, path)
    lines = source.splitlines(keepends=True)
    for node in ast.parse(source).body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name in names:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])  # `@dataclass` included
            code = "".join(lines[first - 1:node.end_lineno])
            exec(compile(code, f"trl-{version}/{path}", "exec"), namespace)  # noqa: S102 - TRL's own code, the oracle
    assert names <= set(namespace)
    return {n: namespace[n] for n in names}


_PPO_NAMES = {"batch_generation", "generate", "forward", "truncate_response", "truncate_right", "pad",
              "first_true_indices"}


@pytest.fixture(scope="module")
def trl026():
    namespace = {"torch": torch, "np": np, "GenerationConfig": transformers.GenerationConfig,
                 "ModelOutput": ModelOutput, "Optional": typing.Optional, "Union": typing.Union}
    return _definitions("0.26.2", "trl/trainer/utils.py", _PPO_NAMES, namespace)


def test_the_0_26_bodies_are_the_1_12_bodies():
    def bodies(version: str, path: str) -> dict[str, str]:
        tree = ast.parse(_source(version, path))
        return {n.name: ast.dump(n) for n in tree.body if isinstance(n, ast.FunctionDef)}

    old = bodies("0.26.2", "trl/trainer/utils.py")
    new = bodies("1.12.0", "trl/experimental/ppo/ppo_trainer.py")
    for name in ("batch_generation", "generate", "forward", "truncate_response", "print_rich_table"):
        assert old[name] == new[name], name


def test_generation_helpers_match_trl_0_26(trl026):
    model = tiny_model(seed=3).eval()
    pad_id = 0
    queries = torch.tensor([[0, 0, 5, 6], [0, 7, 8, 9], [3, 4, 5, 6]])
    config = transformers.GenerationConfig(max_new_tokens=5, do_sample=False, pad_token_id=pad_id,
                                           eos_token_id=None)
    with torch.no_grad():
        ours = compat.trl.batch_generation(model, queries, 2, pad_id, config)
        theirs = trl026["batch_generation"](model, queries, 2, pad_id, config)
        for a, b in zip(ours, theirs):
            assert torch.equal(a, b)
        responses = ours[0][:, queries.shape[1]:]
        stop = int(responses[0, 1])
        assert torch.equal(compat.trl.truncate_response(stop, pad_id, responses),
                           trl026["truncate_response"](stop, pad_id, responses))
        a, b = compat.trl.forward(model, ours[0], pad_id), trl026["forward"](model, ours[0], pad_id)
        assert torch.equal(a.logits, b.logits) and len(a.hidden_states) == len(b.hidden_states)
        for a, b in zip(compat.trl.truncate_right(responses, stop, pad_id),
                        trl026["truncate_right"](responses, stop, pad_id)):
            assert torch.equal(a, b)
    # the written-out meaning of truncate_response: everything after the first stop token is padding
    out = compat.trl.truncate_response(9, 0, torch.tensor([[1, 9, 2, 9], [1, 2, 3, 4]]))
    assert out.tolist() == [[1, 9, 0, 0], [1, 2, 3, 4]]
    ids, mask = compat.trl.truncate_right(torch.tensor([[1, 9, 2, 9], [1, 2, 3, 4]]), 9, 0)
    assert ids.tolist() == [[1, 9, 0, 0], [1, 2, 3, 4]] and mask.tolist() == [[1, 1, 0, 0], [1, 1, 1, 1]]


def test_truncate_right_is_the_same_body_through_1_13():
    """The 0.26.2 function the copy is checked against is 1.13's `trl.experimental.utils.truncate_right`."""
    def body(version: str, path: str) -> str:
        tree = ast.parse(_source(version, path))
        return next(ast.dump(n) for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "truncate_right")

    assert body("0.26.2", "trl/trainer/utils.py") == body("1.13.0", "trl/experimental/utils.py")


def test_print_rich_table_prints_every_cell(capsys):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("rich")
    compat.trl.print_rich_table(pd.DataFrame({"query": ["q1"], "model response": ["r1"]}))
    printed = capsys.readouterr().out
    assert "query" in printed and "model response" in printed and "r1" in printed


def test_peft_saving_callback_matches_trl_0_7_4(tmp_path):
    namespace = {"os": os, "TrainerCallback": transformers.TrainerCallback}
    theirs = _definitions("0.7.4", "trl/trainer/utils.py", {"PeftSavingCallback"}, namespace)["PeftSavingCallback"]

    class Saved:
        """A model whose `save_pretrained` writes one adapter file (what PEFT writes)."""

        def save_pretrained(self, path: str) -> None:
            Path(path, "adapter_model.bin").write_bytes(b"a")

    for cls, out in ((compat.trl.PeftSavingCallback, tmp_path / "ours"), (theirs, tmp_path / "theirs")):
        checkpoint = out / "checkpoint-7"
        checkpoint.mkdir(parents=True)
        (checkpoint / "pytorch_model.bin").write_bytes(b"full")
        args = types.SimpleNamespace(should_save=True, output_dir=str(out))
        cls().on_save(args, types.SimpleNamespace(global_step=7), None, model=Saved())
        assert sorted(p.name for p in checkpoint.iterdir()) == ["adapter_model.bin"]
        skip = types.SimpleNamespace(should_save=False, output_dir=str(out / "none"))
        cls().on_save(skip, types.SimpleNamespace(global_step=8), None, model=Saved())  # not rank 0: nothing
    assert issubclass(compat.trl.PeftSavingCallback, transformers.TrainerCallback)


def test_fdivergence_constants_are_the_0_28_class():
    theirs = _definitions("0.28.0", "trl/trainer/dpo_config.py", {"FDivergenceConstants"}, {})["FDivergenceConstants"]
    public = {k: v for k, v in vars(theirs).items() if not k.startswith("_")}
    assert public == {k: v for k, v in vars(compat.trl.FDivergenceConstants).items() if not k.startswith("_")}
    assert public == {"ALPHA_DIVERGENCE_COEF_KEY": "alpha_divergence_coef", "ALPHA_DIVERGENCE_COEF_DEFAULT": 1.0}


def test_is_torch_greater_2_0_is_the_0_11_check(monkeypatch):
    namespace = {"_is_python_greater_3_8": sys.version_info >= (3, 8)}
    theirs = _definitions("0.11.4", "trl/import_utils.py", {"is_torch_greater_2_0"}, namespace)["is_torch_greater_2_0"]
    assert compat.trl.is_torch_greater_2_0() is theirs() is True  # torch 2.x here (TRL 1.13+ floors)
    for fake in ("1.13.1", "2.0.0", "2.5.1+cpu", "10.0"):  # string comparison, as TRL's ("10.0" < "2.0")
        monkeypatch.setattr(importlib.metadata, "version", lambda name, v=fake: v)
        assert compat.trl.is_torch_greater_2_0() is theirs() is (fake >= "2.0")


@pytest.mark.parametrize("version", ["0.9.6", "0.26.2"])
def test_dpo_collator_matches_trl(version):
    import dataclasses

    from torch.nn.utils.rnn import pad_sequence

    namespace = {"torch": torch, "np": np, "dataclass": dataclasses.dataclass, "pad_sequence": pad_sequence,
                 "Any": typing.Any, "Optional": typing.Optional, "List": typing.List, "Dict": typing.Dict}
    defs = _definitions(version, "trl/trainer/utils.py", {"DPODataCollatorWithPadding", "pad"}, namespace)
    theirs = defs["DPODataCollatorWithPadding"]
    features = [
        {"prompt_input_ids": [5, 6], "prompt_attention_mask": [1, 1], "chosen_input_ids": [1, 2, 3],
         "chosen_labels": [-100, 2, 3], "chosen_attention_mask": [1, 1, 1], "reference_chosen_logps": -1.5,
         "prompt": "a"},
        {"prompt_input_ids": [7], "prompt_attention_mask": [1], "chosen_input_ids": [4],
         "chosen_labels": [4], "chosen_attention_mask": [1], "reference_chosen_logps": -0.5, "prompt": "b"},
    ]
    for kwargs in ({}, {"pad_token_id": 9, "label_pad_token_id": -7}, {"pad_token_id": 9, "is_encoder_decoder": True}):
        ours = compat.trl.DPODataCollatorWithPadding(**kwargs)(features)
        ref = theirs(**kwargs)(features)
        assert ours.keys() == ref.keys()
        for k in ours:
            assert (torch.equal(ours[k], ref[k]) if isinstance(ref[k], torch.Tensor) else ours[k] == ref[k]), (k, kwargs)
    out = compat.trl.DPODataCollatorWithPadding(pad_token_id=9, label_pad_token_id=-7)(features)
    assert out["prompt_input_ids"].tolist() == [[5, 6], [9, 7]]  # prompts padded on the left
    assert out["chosen_labels"].tolist() == [[-100, 2, 3], [4, -7, -7]]


@pytest.mark.parametrize("version", ["0.8.6", "0.11.4", "0.19.1"])
def test_reward_collator_matches_trl(version):
    """The 0.8.6 - 0.11.4 class against each release's own (0.19.1's has no `max_length`). 0.24 - 0.26 added a
    deprecation `__init__` calling `object.__init__(*args)` under `@dataclass`: those classes cannot be built."""
    import dataclasses
    import warnings

    from compat.tiny import tiny_tokenizer

    namespace = {"torch": torch, "dataclass": dataclasses.dataclass, "warnings": warnings,
                 "PreTrainedTokenizerBase": transformers.PreTrainedTokenizerBase, "Any": typing.Any,
                 "Optional": typing.Optional, "Union": typing.Union, "List": typing.List, "Dict": typing.Dict}
    theirs = _definitions(version, "trl/trainer/utils.py", {"RewardDataCollatorWithPadding"},
                          namespace)["RewardDataCollatorWithPadding"]
    tok = tiny_tokenizer()
    features = [
        {"input_ids_chosen": [5, 6, 7], "attention_mask_chosen": [1, 1, 1], "input_ids_rejected": [8],
         "attention_mask_rejected": [1], "margin": 0.5},
        {"input_ids_chosen": [9], "attention_mask_chosen": [1], "input_ids_rejected": [10, 11],
         "attention_mask_rejected": [1, 1], "margin": -1.0},
    ]
    options = [{}, {"pad_to_multiple_of": 4}, {"padding": "max_length", **({"max_length": 5} if version != "0.19.1" else {})}]
    for kwargs in options:
        for feats in (features, [{k: v for k, v in f.items() if k != "margin"} for f in features]):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                ref = theirs(tok, **kwargs)(feats)
            ours = compat.trl.RewardDataCollatorWithPadding(tok, **kwargs)(feats)
            assert ours.keys() == ref.keys()
            for k in ours:
                assert (torch.equal(ours[k], ref[k]) if isinstance(ref[k], torch.Tensor) else ours[k] == ref[k]), (k, kwargs)
    out = compat.trl.RewardDataCollatorWithPadding(tok)(features)
    pad = tok.pad_token_id
    assert tok.padding_side == "left" and out["input_ids_rejected"].tolist() == [[pad, 8], [10, 11]]
    assert out["margin"].dtype == torch.float32 and out["return_loss"] is True
    with pytest.raises(ValueError, match="input_ids_chosen"):
        compat.trl.RewardDataCollatorWithPadding(tok)([{"input_ids": [1]}])


def test_sanitize_kwargs_for_tagging_matches_trl_0_13(monkeypatch):
    import importlib.util

    namespace = {"is_unsloth_available": lambda: importlib.util.find_spec("unsloth") is not None}
    theirs = _definitions("0.13.0", "trl/trainer/utils.py", {"trl_sanitze_kwargs_for_tagging"},
                          namespace)["trl_sanitze_kwargs_for_tagging"]
    model = types.SimpleNamespace(config=types.SimpleNamespace(unsloth_version="2024.1"))
    for kwargs in (None, {}, {"tags": ["mine"]}, {"tags": "one"}, {"commit_message": "x"}):
        tags_a, tags_b = ["trl", "simpo"], ["trl", "simpo"]
        a = compat.trl.trl_sanitze_kwargs_for_tagging(model, tags_a, None if kwargs is None else dict(kwargs))
        b = theirs(model, tags_b, None if kwargs is None else dict(kwargs))
        assert a == b and tags_a == tags_b
    assert compat.trl.trl_sanitze_kwargs_for_tagging(model, ["t"], {"tags": "one"}) == {"tags": ["t", "one"]}


def test_kl_controllers_match_trl_0_13():
    defs = _definitions("0.13.0", "trl/trainer/utils.py", {"AdaptiveKLController", "FixedKLController"}, {"np": np})
    ours, theirs = compat.trl.AdaptiveKLController(0.2, 6.0, 10000), defs["AdaptiveKLController"](0.2, 6.0, 10000)
    for current, steps in ((8.0, 256), (1.0, 256), (6.3, 64), (40.0, 1024), (-3.0, 8)):
        ours.update(current, steps)
        theirs.update(current, steps)
        assert ours.value == theirs.value and type(ours.value) is type(theirs.value)
    # the formula written out (Ziegler et al. 2019, eq. 2): the error is clipped to +-0.2
    k = compat.trl.AdaptiveKLController(0.1, 6.0, 100)
    k.update(60.0, 10)
    assert k.value == pytest.approx(0.1 * (1 + 0.2 * 10 / 100))
    k.update(6.0 * 1.05, 10)
    assert k.value == pytest.approx(0.1 * (1 + 0.2 * 10 / 100) * (1 + 0.05 * 10 / 100))
    fixed, theirs_fixed = compat.trl.FixedKLController(0.05), defs["FixedKLController"](0.05)
    fixed.update(100.0, 7)
    theirs_fixed.update(100.0, 7)
    assert fixed.value == theirs_fixed.value == 0.05
    assert vars(compat.trl.AdaptiveKLController(1, 2, 3)) == vars(defs["AdaptiveKLController"](1, 2, 3))


def test_core_statistics_helpers_match_trl_0_13():
    from torch.nn.utils.rnn import pad_sequence

    names = {"stack_dicts", "stats_to_np", "convert_to_scalar"}
    defs = _definitions("0.13.0", "trl/core.py", names,
                        {"torch": torch, "np": np, "pad_sequence": pad_sequence, "WANDB_PADDING": -1})
    stats = [{"a": torch.tensor([1.0, 2.0]), "b": torch.tensor(3.0)}, {"a": torch.tensor([4.0]), "b": torch.tensor(5.0)}]
    ours, theirs = compat.trl.stack_dicts(stats), defs["stack_dicts"](stats)
    assert ours.keys() == theirs.keys() and all(torch.equal(ours[k], theirs[k]) for k in ours)
    assert ours["a"].tolist() == [[1.0, 2.0], [4.0, -1.0]]
    mixed = {"t": torch.tensor([1.5, 2.5], dtype=torch.bfloat16), "s": torch.tensor(2.0), "i": 3, "n": np.float32(0.5),
             "l": [1, 2], "o": torch.ones(2, requires_grad=True), "one": np.array([7.0])}
    a, b = compat.trl.stats_to_np(mixed), defs["stats_to_np"](mixed)
    assert a.keys() == b.keys()
    for k in a:
        assert type(a[k]) is type(b[k]) and np.array_equal(a[k], b[k]), k
        if isinstance(a[k], np.ndarray):
            assert a[k].dtype == b[k].dtype
    # a 0-d tensor stays a 0-d array (np.isscalar is false for it); Python and numpy scalars become floats
    assert a["s"].shape == () and type(a["i"]) is float and type(a["n"]) is float and a["t"].dtype == np.float32
    scal = {"x": torch.tensor(1.0), "y": torch.tensor([2.0]), "z": np.array([3.0, 4.0]), "w": "keep", "v": np.ones(())}
    a, b = compat.trl.convert_to_scalar(scal), defs["convert_to_scalar"](scal)
    assert a.keys() == b.keys() and a["x"] == b["x"] == 1.0 and a["y"] == b["y"] == 2.0 and a["w"] == "keep"
    assert np.array_equal(a["z"], b["z"]) and a["v"] == b["v"] == 1.0


def test_ppo_decorators_match_trl_0_23(monkeypatch):
    import contextlib
    import gc

    namespace = {"torch": torch, "gc": gc, "contextmanager": contextlib.contextmanager,
                 "is_torch_xpu_available": transformers.is_torch_xpu_available,
                 "is_torch_npu_available": transformers.is_torch_npu_available}
    theirs = _definitions("0.23.1", "trl/core.py", {"PPODecorators"}, namespace)["PPODecorators"]
    for cls in (compat.trl.PPODecorators, theirs):
        emptied: list[str] = []
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        monkeypatch.setattr(torch.cuda, "empty_cache", lambda: emptied.append("cuda"))

        @cls.empty_device_cache()
        def step(x):
            return x + 1

        assert cls.optimize_device_cache is False
        assert step(1) == 2 and emptied == []  # off by default
        monkeypatch.setattr(cls, "optimize_device_cache", True)
        assert step(2) == 3 and emptied == ["cuda"]
        with cls.empty_device_cache():
            pass
        assert emptied == ["cuda", "cuda"]


def test_ppo_decorators_keep_the_names_of_trl_0_7_2(monkeypatch):
    """Copies of the PPOTrainer of TRL 0.4 - 0.7.3 (yongzhuo/chatglm-maths's models/ppo_trainer.py) set
    `PPODecorators.optimize_cuda_cache` and decorate with `@PPODecorators.empty_cuda_cache()`, names TRL 0.7.4 renamed.
    TRL 0.7.2's class, executed from its wheel, is the oracle."""
    import contextlib
    import gc

    namespace = {"torch": torch, "gc": gc, "contextmanager": contextlib.contextmanager}
    theirs = _definitions("0.7.2", "trl/core.py", {"PPODecorators"}, namespace)["PPODecorators"]
    for cls in (compat.trl.PPODecorators, theirs):
        emptied: list[str] = []
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        monkeypatch.setattr(torch.cuda, "empty_cache", lambda: emptied.append("cuda"))

        @cls.empty_cuda_cache()
        def step(x):
            return x + 1

        assert cls.optimize_cuda_cache is False
        assert step(1) == 2 and emptied == []
        monkeypatch.setattr(cls, "optimize_cuda_cache", True)
        assert step(2) == 3 and emptied == ["cuda"]
        monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
        assert step(3) == 4 and emptied == ["cuda"]  # CUDA only, unlike empty_device_cache
    assert compat.trl.PPODecorators.optimize_device_cache is False  # the two flags are separate


def test_running_moments_match_trl_0_28(tmp_path):
    import dataclasses
    import json

    from accelerate import Accelerator

    namespace = {"torch": torch, "dataclass": dataclasses.dataclass, "dataclasses": dataclasses, "json": json,
                 "Accelerator": Accelerator}
    defs = _definitions("0.28.0", "trl/trainer/utils.py", {"RunningMoments", "get_global_statistics"}, namespace)
    namespace["get_global_statistics"] = defs["get_global_statistics"]
    accelerator = Accelerator(cpu=True)
    ours, theirs = compat.trl.RunningMoments(accelerator), defs["RunningMoments"](accelerator)
    gen = torch.Generator().manual_seed(0)
    batches = [torch.randn(n, generator=gen) * s + m for n, s, m in ((8, 1.0, 0.0), (5, 3.0, 2.0), (17, 0.5, -1.0))]
    for xs in batches:
        assert ours.update(xs) == theirs.update(xs)
        assert (ours.mean, ours.std, ours.var, ours.count) == (theirs.mean, theirs.std, theirs.var, theirs.count)
    every = torch.cat(batches).double()  # the running moments are the moments of everything seen (float32 error)
    assert ours.mean == pytest.approx(every.mean().item(), abs=1e-5)
    assert ours.std == pytest.approx(every.std().item(), rel=1e-5)
    ours.save_to_json(str(tmp_path / "a.json"))
    theirs.save_to_json(str(tmp_path / "b.json"))
    assert (tmp_path / "a.json").read_text() == (tmp_path / "b.json").read_text()
    loaded = compat.trl.RunningMoments.load_from_json(accelerator, str(tmp_path / "a.json"))
    assert (loaded.mean, loaded.var, loaded.count) == (ours.mean, ours.var, ours.count)
    xs, mask = torch.tensor([1.0, 2.0, 6.0]), torch.tensor([1.0, 1.0, 0.0])
    for a, b in zip(compat.trl.get_global_statistics(accelerator, xs, mask), defs["get_global_statistics"](accelerator, xs, mask)):
        assert (torch.equal(a, b) if isinstance(a, torch.Tensor) else a == b)


def test_base_trainer_is_the_0_13_class():
    from huggingface_hub import PyTorchModelHubMixin

    theirs = _definitions("0.13.0", "trl/trainer/base.py", {"BaseTrainer"},
                          {"PyTorchModelHubMixin": PyTorchModelHubMixin})["BaseTrainer"]
    for cls in (compat.trl.BaseTrainer, theirs):
        assert issubclass(cls, PyTorchModelHubMixin)
        trainer = cls({"lr": 1})
        assert trainer.config == {"lr": 1}
        for method, args in (("step", (1, 2)), ("loss", ()), ("compute_rewards", (3,)), ("_save_pretrained", ("d",))):
            with pytest.raises(NotImplementedError, match="Not implemented"):
                getattr(trainer, method)(*args)
    public = {n for n in vars(theirs) if not n.startswith("__")}
    assert public == {n for n in vars(compat.trl.BaseTrainer) if not n.startswith("__")}


def _outcome(fn: typing.Callable[..., typing.Any], *args: typing.Any, **kwargs: typing.Any) -> tuple[str, typing.Any]:
    """What a call does: ("value", the result) or (the exception's type name, its message)."""
    try:
        return "value", fn(*args, **kwargs)
    except (TypeError, ValueError) as e:
        return type(e).__name__, str(e) if isinstance(e, ValueError) else None


@pytest.mark.parametrize("version, path", [("1.12.0", "trl/experimental/ppo/ppo_trainer.py"),
                                           ("0.26.2", "trl/trainer/utils.py"), ("0.9.2", "trl/trainer/utils.py")])
def test_exact_div_matches_trl_0_9_to_1_12(version, path):
    theirs = _definitions(version, path, {"exact_div"}, {})["exact_div"]
    calls = [((12, 4), {}), ((12, 5), {}), ((12, 5, "`batch_size` must be a multiple"), {}),
             ((12, 5), {"custom_error_message": "msg"}), ((7.5, 2.5), {}), ((0, 3), {}), ((-9, 3), {}),
             ((12,), {}), ((12, 5), {"message": "x"})]
    for args, kwargs in calls:
        assert _outcome(compat.trl.exact_div, *args, **kwargs) == _outcome(theirs, *args, **kwargs), (args, kwargs)
    assert compat.trl.exact_div(12, 4) == 3
    with pytest.raises(ValueError, match=r"^msg, inexact division: 12 / 5 = 2.4$"):
        compat.trl.exact_div(12, 5, "msg")


def test_exact_div_runs_the_0_6_to_0_8_call_form_as_trl_0_8_did():
    """optimum-habana's GaudiPPOConfig (TRL 0.8.6) passes the operands' names: exact_div(a, b, a_str, b_str, msg)."""
    theirs = _definitions("0.8.6", "trl/trainer/utils.py", {"exact_div"}, {})["exact_div"]
    calls = [((64, 8, "`batch_size`", "`mini`", "`batch_size` must be a multiple"), {}),
             ((64, 7, "`batch_size`", "`mini`", "`batch_size` must be a multiple"), {}),
             ((64, 7, "`batch_size`", "`mini`"), {}), ((64, 7), {"a_str": "a", "b_str": "b"}),
             ((64, 7, "a"), {"b_str": "b", "custom_error_message": "m"}), ((64, 7), {"a_str": "a"})]
    for args, kwargs in calls:
        assert _outcome(compat.trl.exact_div, *args, **kwargs) == _outcome(theirs, *args, **kwargs), (args, kwargs)
    with pytest.raises(ValueError, match=r"^m, a=64, b=7, inexact division: 64 / 7 = "):
        compat.trl.exact_div(64, 7, "a", "b", "m")


@pytest.fixture(scope="module")
def trl_accuracy():
    from accelerate import PartialState
    from accelerate.logging import get_logger

    namespace = {"np": np, "EvalPrediction": transformers.EvalPrediction, "PartialState": PartialState,
                 "logger": get_logger("trl-1.13.0")}
    return {version: _definitions(version, path, {"compute_accuracy"}, dict(namespace))["compute_accuracy"]
            for version, path in (("1.13.0", "trl/experimental/prm/prm_trainer.py"),
                                  ("0.26.2", "trl/trainer/utils.py"))}


def test_compute_accuracy_matches_trl_1_13(trl_accuracy):
    rng = np.random.default_rng(0)
    rewards = rng.normal(size=(9, 2)).astype(np.float32)
    rewards[[2, 5]] = 0.25  # two tied pairs: left out
    token_logits = rng.normal(size=(3, 5, 2))
    token_labels = rng.integers(0, 2, size=(3, 5))
    token_labels[0, :2] = -100
    token_labels[2, :] = -100
    cases = [(rewards, np.zeros(9, dtype=np.int64)), (rewards[[0, 1, 3]], np.array([0, 1, 0])),
             (token_logits, token_labels), (rewards[[2, 5]], np.zeros(2, dtype=np.int64))]
    for predictions, labels in cases:
        for theirs in trl_accuracy.values():
            ours = compat.trl.compute_accuracy(transformers.EvalPrediction(predictions, labels))
            expected = theirs(transformers.EvalPrediction(predictions, labels))
            assert ours.keys() == expected.keys() == {"accuracy"}
            assert ours["accuracy"] == expected["accuracy"] or (np.isnan(ours["accuracy"])
                                                                and np.isnan(expected["accuracy"]))
    # written out: 9 pairs, 2 tied; label 0 (chosen) matches where chosen > rejected
    kept = np.delete(rewards, [2, 5], axis=0)
    want = float(np.mean(kept[:, 0] > kept[:, 1]))
    assert compat.trl.compute_accuracy((rewards, np.zeros(9, dtype=np.int64)))["accuracy"] == pytest.approx(want)


def test_compute_accuracy_warns_about_ties(caplog):
    import logging

    predictions = np.array([[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]])
    with caplog.at_level(logging.WARNING):
        out = compat.trl.compute_accuracy((predictions, np.zeros(3, dtype=np.int64)))
    assert out == {"accuracy": 0.5}
    assert "There are 1 out of 3 instances where the predictions for both options are equal" in caplog.text


@pytest.mark.parametrize("version, path", [("0.11.4", "trl/trainer/utils.py"), ("0.26.2", "trl/trainer/utils.py"),
                                           ("1.12.0", "trl/experimental/ppo/ppo_trainer.py")])
def test_online_trainer_state_is_trls_dataclass(version, path):
    """The PPOv2 / RLOO trainers' state: TRL's own class, executed on the installed transformers, has the same fields
    and defaults, and saves and loads the same JSON."""
    import dataclasses

    theirs = _definitions(version, path, {"OnlineTrainerState"},
                          {"dataclass": dataclasses.dataclass, "TrainerState": transformers.TrainerState})
    theirs = theirs["OnlineTrainerState"]
    ours = compat.trl.OnlineTrainerState
    assert issubclass(ours, transformers.TrainerState)
    assert [(f.name, f.default) for f in dataclasses.fields(ours)] == \
        [(f.name, f.default) for f in dataclasses.fields(theirs)]
    kwargs = {"episode": 12, "global_step": 3, "is_world_process_zero": True}
    assert dataclasses.asdict(ours(**kwargs)) == dataclasses.asdict(theirs(**kwargs))
    assert ours().episode == 0


def _code_of(function: ast.FunctionDef) -> tuple[str, str]:
    """A function's parameters and statements as `ast.dump`s, without its docstring, its import statements (TRL
    imports `AcceleratorState` at module level, the copy inside the function) and annotations."""
    args = ast.dump(ast.arguments(
        posonlyargs=[], args=[ast.arg(a.arg) for a in function.args.args], vararg=None, kwonlyargs=[], kw_defaults=[],
        kwarg=None, defaults=function.args.defaults))
    body = [s for s in function.body if not isinstance(s, (ast.Import, ast.ImportFrom))]
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return args, ast.dump(ast.Module(body=body, type_ignores=[]))


@pytest.mark.parametrize("version", ["0.9.6", "0.11.4", "0.12.2", "0.19.1", "0.26.2", "1.0.0"])
def test_prepare_deepspeed_is_trls_code(version):
    """The old `prepare_deepspeed(model, per_device_train_batch_size, fp16, bf16)`: the same parameters, defaults and
    statements as TRL's in every release that had it (docstrings, annotations and the place of the imports aside).
    A real `deepspeed.initialize` needs a distributed launch, which these tests do not make."""
    import inspect as inspect_

    import compat._trainer_utils

    theirs = next(n for n in ast.parse(_source(version, "trl/trainer/utils.py")).body
                  if isinstance(n, ast.FunctionDef) and n.name == "prepare_deepspeed")
    ours = next(n for n in ast.parse(inspect_.getsource(compat._trainer_utils)).body
                if isinstance(n, ast.FunctionDef) and n.name == "prepare_deepspeed")
    assert _code_of(ours) == _code_of(theirs)
    from accelerate.state import AcceleratorState  # what the copy reads, on the installed accelerate

    assert isinstance(inspect_.getattr_static(AcceleratorState, "deepspeed_plugin"), property)


@pytest.mark.parametrize("version", ["0.7.4", "0.9.6", "0.11.4"])
def test_neftune_hook_matches_trl(version):
    """TRL's NEFTune hook and the copy, on the same embedding and seed: the same noise in training mode (and within
    the written-out bound alpha / sqrt(L * d)), none in eval mode."""
    theirs = _definitions(version, "trl/trainer/utils.py", {"neftune_post_forward_hook"},
                          {"torch": torch})["neftune_post_forward_hook"]
    embedding = torch.nn.Embedding(11, 6)
    embedding.neftune_noise_alpha = 5.0
    ids = torch.tensor([[1, 2, 3, 4], [5, 6, 7, 8]])
    clean = embedding(ids)
    for training in (True, False):
        embedding.train(training)
        outputs = []
        for hook in (compat.trl.neftune_post_forward_hook, theirs):
            handle = embedding.register_forward_hook(hook)
            torch.manual_seed(0)
            outputs.append(embedding(ids))
            handle.remove()
        assert torch.equal(outputs[0], outputs[1])
        noise = (outputs[0] - clean).abs().max().item()
        if training:
            assert 0 < noise <= 5.0 / (4 * 6) ** 0.5 + 1e-6
        else:
            assert noise == 0


@pytest.mark.parametrize("name, path", [("PPOv2Config", "trl.trainer.ppov2_config.PPOv2Config"),
                                        ("OnPolicyConfig", "trl.trainer.utils.OnPolicyConfig")])
def test_on_policy_configs_have_every_releases_fields_and_defaults(name, path):
    """Held against the API atlas (read from every wheel): each TRL-declared field of every release that had the
    class is a field of the copy with that release's default, and the copy has no field no release had. The one
    exception, documented: 0.12's PPOv2Config alias computed `exp_name` from another module's name."""
    import ast as ast_
    import dataclasses

    from migrations.atlas import Atlas
    from migrations.kinds.leftovers import _training_arguments_fields

    atlas = Atlas.load("trl")
    inherited = _training_arguments_fields() - {"run_name"}  # OnPolicyConfig redeclares run_name
    ours = {f.name: f.default for f in dataclasses.fields(getattr(compat.trl, name))}
    declared: set[str] = set()
    releases = [r for r in atlas.releases() if atlas.has(r, path)]
    assert releases
    for release in releases:
        for field, info in (atlas.config_fields(release, path) or {}).items():
            if field in inherited:
                continue
            declared.add(field)
            if field == "exp_name":  # `os.path.basename(__file__)[:-3]` of the module that declared it
                assert "basename(__file__)" in info.default, release
                assert info.origin.endswith(("ppov2_config.PPOv2Config", "ppo_config.PPOConfig")), release
                if not release.startswith("0.12."):  # declared in ppo_config.py there, not ppov2_config.py
                    assert ours[field] == "ppov2_config", release
                continue
            assert ours[field] == ast_.literal_eval(info.default), (release, field)
    assert {f for f in ours if f not in _training_arguments_fields() or f == "run_name"} == declared


def test_trainer_style_ppo_config_has_every_releases_fields_and_defaults():
    """compat.trl.PPOConfig against the atlas: every field TRL declared on the Trainer-style PPOConfig of 0.12 - 1.12
    (`trl.PPOConfig` 0.12 - 0.28, `trl.experimental.ppo.PPOConfig` 0.26 - 1.12) is a field here with the default of
    every release that had it. The TrainingArguments fields releases redeclared with other defaults are the
    documented exceptions (they keep transformers' default here); the 0.9 - 0.10 fields PPOv2Config keeps are
    extra."""
    import ast as ast_
    import dataclasses

    from packaging.version import Version

    from migrations.atlas import Atlas
    from migrations.kinds.leftovers import _training_arguments_fields

    atlas = Atlas.load("trl")
    inherited = _training_arguments_fields()
    ours = {f.name: f.default for f in dataclasses.fields(compat.trl.PPOConfig)}
    declared: set[str] = set()
    seen = 0
    for release in atlas.releases():
        for path in ("trl.PPOConfig", "trl.experimental.ppo.PPOConfig"):
            if path == "trl.PPOConfig" and Version(release) < Version("0.12") or not atlas.has(release, path):
                continue
            seen += 1
            for field, info in (atlas.config_fields(release, path) or {}).items():
                if field in inherited and field != "run_name":
                    continue
                declared.add(field)
                if field == "exp_name":  # `os.path.basename(__file__)[:-3]` of ppo_config.py
                    assert "basename(__file__)" in info.default and info.origin.endswith("ppo_config.PPOConfig")
                    assert ours[field] == "ppo_config"
                    continue
                assert ours[field] == ast_.literal_eval(info.default), (release, field)
    assert seen > 40
    assert declared <= set(ours)
    assert set(ours) - declared - inherited == {"sanity_check", "penalty_reward_value", "non_eos_penalty",
                                                "base_model", "num_updates"}  # PPOv2Config's 0.9 - 0.10 fields


def _trl_0_11_ppo_config() -> type:
    """TRL 0.11.4's step-loop PPOConfig, executed from its wheel with its own `exact_div` and `flatten_dict`. Its
    annotations name tyro (not installed here): they stay unevaluated strings (`from __future__ import annotations`),
    which is all `dataclass` needs; nothing of tyro's behaviour is used."""
    import dataclasses
    import os
    import sys
    import warnings

    helpers = _definitions("0.11.4", "trl/trainer/utils.py", {"exact_div"}, {})
    helpers |= _definitions("0.11.4", "trl/core.py", {"flatten_dict"}, {"Dict": dict, "Mapping": typing.Mapping})
    source = _source("0.11.4", "trl/trainer/ppo_config.py")
    node = next(n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == "PPOConfig")
    lines = source.splitlines(keepends=True)
    code = "from __future__ import annotations\n" + "".join(lines[node.decorator_list[0].lineno - 1:node.end_lineno])
    namespace = {"dataclass": dataclasses.dataclass, "field": dataclasses.field, "os": os, "sys": sys, "np": np,
                 "warnings": warnings, "is_wandb_available": lambda: True, **helpers}
    exec(compile(code, "trl-0.11.4/trl/trainer/ppo_config.py", "exec"), namespace)  # noqa: S102 - the oracle
    return namespace["PPOConfig"]


def test_classic_ppo_config_is_trl_0_11s():
    """compat.trl.ClassicPPOConfig against TRL 0.11.4's PPOConfig (its wheel's code): the same fields and defaults,
    the same state after `__post_init__` for the same keywords, the same refusals, the same `to_dict()`."""
    import dataclasses
    import warnings

    theirs = _trl_0_11_ppo_config()
    ours = compat.trl.ClassicPPOConfig

    def defaults(cls):
        return {f.name: f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
                for f in dataclasses.fields(cls)}

    assert defaults(ours) == defaults(theirs)
    cases = [{}, {"batch_size": 8, "mini_batch_size": 2, "gradient_accumulation_steps": 2, "steps": 100},
             {"batch_size": 16, "forward_batch_size": 4, "tracker_kwargs": {"wandb": {"entity": "me"}}},
             {"batch_size": 6, "mini_batch_size": 4}, {"kl_penalty": "nope"}, {"log_with": "tensorboard"}]
    for keywords in cases:
        outcome = []
        for cls in (ours, theirs):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    config = cls(**keywords)
                except (ValueError, AssertionError) as exc:
                    outcome.append(type(exc).__name__)
                    continue
            outcome.append((dict(vars(config)), config.to_dict()))
        assert outcome[0] == outcome[1], keywords


def test_on_policy_configs_build_and_parse():
    """On the installed transformers: built with defaults (world_size a field, None until a trainer sets it) and
    parsed from a command line of either TRL line."""
    from transformers import HfArgumentParser

    config = compat.trl.PPOv2Config(output_dir="out")
    assert isinstance(config, transformers.TrainingArguments) and config.world_size is None
    assert (config.exp_name, config.total_episodes, config.kl_coef) == ("ppov2_config", None, 0.05)
    parsed, = HfArgumentParser((compat.trl.PPOv2Config,)).parse_args_into_dataclasses(
        ["--output_dir", "o", "--total_episodes", "64", "--non_eos_penalty", "--missing_eos_penalty", "1.0",
         "--stop_token", "eos"])
    assert (parsed.total_episodes, parsed.non_eos_penalty, parsed.missing_eos_penalty, parsed.stop_token) == \
        (64, True, 1.0, "eos")
    assert issubclass(compat.trl.PPOv2Config, compat.trl.OnPolicyConfig)


def test_decode_and_strip_padding_matches_trl_0_19():
    """TRL 0.19.1's function (executed from the wheel) is the oracle; the written-out meaning beside it."""
    from compat.tiny import tiny_tokenizer

    theirs = _definitions("0.19.1", "trl/trainer/utils.py", {"decode_and_strip_padding"},
                          {"torch": torch, "PreTrainedTokenizerBase": transformers.PreTrainedTokenizerBase})
    tok = tiny_tokenizer()
    pad = tok.pad_token_id
    ids = torch.tensor([[pad, pad, 5, 6], [7, 8, 9, pad]])
    ours = compat.trl.decode_and_strip_padding(ids, tok)
    assert ours == theirs["decode_and_strip_padding"](ids, tok)
    expected = [tok.decode(row, skip_special_tokens=False).replace(tok.pad_token, "") for row in ids.tolist()]
    assert ours == expected and all(tok.pad_token not in s for s in ours)
