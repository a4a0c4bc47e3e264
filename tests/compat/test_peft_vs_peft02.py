"""`compat.trl.prepare_model_for_int8_training` (`compat._peft`) held against peft 0.2.0's own function, read out of
its wheel (parsed with `ast`; only that definition runs, with torch) and run on a copy of the same tiny model.

An 8-bit model cannot be loaded here (bitsandbytes needs CUDA): the tests set the flag transformers' 8-bit quantizer
sets (`model.is_loaded_in_8bit = True`, `quantizer_bnb_8bit.py`), which is all either function reads of it; the
weights stay bf16. The wheel comes from `$TRL_COMPAT_WHEELS` or `/work/cache/wheels` (tests/wheels.txt); without it
the test skips.
"""

from __future__ import annotations

import ast
import copy
import os
import zipfile
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import compat.trl
from compat.tiny import tiny_model

_WHEEL = Path(os.environ.get("TRL_COMPAT_WHEELS", "/work/cache/wheels")) / "peft-0.2.0-py3-none-any.whl"


@pytest.fixture(scope="module")
def peft_0_2():
    if not _WHEEL.is_file():
        pytest.skip(f"no peft 0.2.0 wheel at {_WHEEL}")
    source = zipfile.ZipFile(_WHEEL).read("peft/utils/other.py").decode("utf-8")
    lines = source.splitlines(keepends=True)
    node = next(n for n in ast.parse(source).body
                if isinstance(n, ast.FunctionDef) and n.name == "prepare_model_for_int8_training")
    namespace = {"torch": torch}
    exec(compile("".join(lines[node.lineno - 1:node.end_lineno]), "peft-0.2.0/peft/utils/other.py", "exec"),  # noqa: S102
         namespace)
    return namespace["prepare_model_for_int8_training"]


def _model(in_8bit: bool):
    model = tiny_model().to(torch.bfloat16)
    if in_8bit:
        model.is_loaded_in_8bit = True
    return model


def _checkpointing(model) -> bool:
    """Whether gradient checkpointing is on: `is_activation_checkpointing` on transformers 5.x, whose
    `is_gradient_checkpointing` warns; only the latter on the floor env's transformers 4.x."""
    if hasattr(type(model), "is_activation_checkpointing"):
        return model.is_activation_checkpointing
    return model.is_gradient_checkpointing


@pytest.mark.parametrize("in_8bit", [True, False])
@pytest.mark.parametrize("kwargs", [
    {},
    {"layer_norm_names": ["layernorm", "norm"]},
    {"layer_norm_names": ["input_layernorm"], "use_gradient_checkpointing": False},
    {"output_embedding_layer_name": "not_there"},
])
def test_same_model_as_peft_0_2(peft_0_2, in_8bit, kwargs):
    base = _model(in_8bit)
    ours = compat.trl.prepare_model_for_int8_training(copy.deepcopy(base), **kwargs)
    theirs = peft_0_2(copy.deepcopy(base), **kwargs)

    assert [(n, p.dtype, p.requires_grad) for n, p in ours.named_parameters()] == \
        [(n, p.dtype, p.requires_grad) for n, p in theirs.named_parameters()]
    assert not any(p.requires_grad for p in ours.parameters())
    assert _checkpointing(ours) == _checkpointing(theirs)
    assert type(ours.lm_head).__name__ == type(theirs.lm_head).__name__
    x = torch.randn(2, 3, ours.config.hidden_size, dtype=ours.lm_head.weight.dtype if "output_embedding_layer_name"
                    in kwargs else torch.float32)  # the unwrapped bf16 layer takes bf16
    out, ref = ours.lm_head(x), theirs.lm_head(x)
    assert out.dtype == ref.dtype
    torch.testing.assert_close(out, ref, rtol=0, atol=0)
    if in_8bit and kwargs.get("layer_norm_names"):
        assert ours.model.norm.weight.dtype == (torch.float32 if "norm" in kwargs["layer_norm_names"]
                                                 else torch.bfloat16)


def test_output_layer_cast_to_fp32_from_its_own_dtype():
    model = compat.trl.prepare_model_for_int8_training(_model(False))
    out = model.lm_head(torch.randn(1, 2, model.config.hidden_size, dtype=torch.float32))
    assert out.dtype == torch.float32  # fed bf16 (the layer's dtype), returned fp32
    assert model.lm_head[0].weight.dtype == torch.bfloat16
