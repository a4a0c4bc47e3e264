"""Before/after and no-op cases for `unwrap-is-peft-model`, and the fact it rests on: what `is_peft_model=True` did
in every TRL that had it (read from the wheels) does nothing to a real peft model (the installed peft)."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from migrations.v0_15.unwrap_is_peft_model import MIGRATION as RULE
from tests.migrations._driver import check, noop, run


def test_vendored_classic_ppo_trainer_call():
    check(RULE, """\
        from trl.models.utils import unwrap_model_for_generation

        class MyPPOTrainer:
            def generate(self, query):
                with unwrap_model_for_generation(
                    self.model, self.accelerator, is_peft_model=self.is_peft_model
                ) as unwrapped_model:
                    return unwrapped_model.generate(query)
    """, """\
        from trl.models.utils import unwrap_model_for_generation

        class MyPPOTrainer:
            def generate(self, query):
                with unwrap_model_for_generation(
                    self.model, self.accelerator
                ) as unwrapped_model:
                    return unwrapped_model.generate(query)
    """)


def test_014_call_keeps_gather_and_a_call_value_is_marked():
    out, _ = run(RULE, """\
        from trl.models import unwrap_model_for_generation
        ctx = unwrap_model_for_generation(m, acc, is_peft_model=True, gather_deepspeed3_params=False)
    """)
    assert "unwrap_model_for_generation(m, acc, gather_deepspeed3_params=False)" in out
    out, findings = run(RULE, """\
        from trl.models.utils import unwrap_model_for_generation
        ctx = unwrap_model_for_generation(m, acc, is_peft_model=is_peft(m))
    """)
    assert "is_peft_model=is_peft(m)" in out and "# TODO(trl-compat): unwrap_model_for_generation() takes no" in out
    assert [f.severity for f in findings] == ["manual"]


def test_noops():
    noop(RULE, """\
        from trl.models.utils import unwrap_model_for_generation
        ctx = unwrap_model_for_generation(m, acc, True)  # 0.14's is_peft_model or 0.15's gather: not in the call
    """)
    noop(RULE, """\
        from mylib import unwrap_model_for_generation  # not TRL's
        ctx = unwrap_model_for_generation(m, acc, is_peft_model=True)
        s = "unwrap_model_for_generation(m, acc, is_peft_model=True)"
    """)


def test_the_keyword_only_called_disable_adapter_outside_a_with():
    wheels = Path(os.environ.get("TRL_COMPAT_WHEELS", "/work/cache/wheels"))
    found = [w for w in ("0.9.2", "0.11.4", "0.12.2", "0.13.0") if (wheels / f"trl-{w}-py3-none-any.whl").is_file()]
    if not found:
        pytest.skip("no TRL wheels")
    for version in found:
        text = zipfile.ZipFile(wheels / f"trl-{version}-py3-none-any.whl").read("trl/models/utils.py").decode()
        body = text[text.index("def unwrap_model_for_generation("):]
        body = body.split("\n\n\n", 1)[0]  # to the next top-level definition, or the end of the file
        assert "    if is_peft_model:\n        unwrapped_model.pretrained_model.disable_adapter()\n" in body, version
        assert body.count("is_peft_model") == 2, version  # the parameter and that one test


def test_calling_disable_adapter_without_with_leaves_the_adapter_on():
    torch = pytest.importorskip("torch")
    from peft import LoraConfig, get_peft_model

    from compat.tiny import tiny_model

    model = get_peft_model(tiny_model(), LoraConfig(r=4, target_modules=["q_proj", "v_proj"]))
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_()  # a trained adapter: B is zero at init, which would hide the difference
    ids = torch.tensor([[1, 2, 3, 4]])
    with torch.no_grad():
        on = model(ids).logits
        model.disable_adapter()  # what is_peft_model=True ran (on the value head's pretrained_model)
        after = model(ids).logits
        with model.disable_adapter():
            off = model(ids).logits
    assert torch.equal(on, after) and not torch.allclose(on, off)
