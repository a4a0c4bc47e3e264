"""`removed-training-arguments`: before/after and no-op cases."""

from __future__ import annotations

import os
import re
import zipfile
from pathlib import Path

import pytest

from migrations.atlas import Atlas
from migrations.transformers.v5_0.removed_training_arguments import DECIDE, DROPPED, RENAMED
from migrations.transformers.v5_0.removed_training_arguments import MIGRATION as RULE
from tests.migrations._driver import check, noop, run


def test_renamed_and_marked():
    check(RULE, "from transformers import TrainingArguments\na = TrainingArguments('o', no_cuda=True, per_gpu_train_batch_size=4)\n",
          "from transformers import TrainingArguments\na = TrainingArguments('o', use_cpu=True, per_device_train_batch_size=4)\n")
    out, findings = run(RULE, "from trl import SFTConfig\na = SFTConfig(output_dir='o', save_safetensors=False)\n")
    assert out.splitlines()[1].startswith("# TODO(trl-compat): TrainingArguments(save_safetensors=) was")
    assert findings[0].message.startswith("TrainingArguments(save_safetensors=) was removed")
    # overwrite_output_dir= is the rule overwrite-output-dir's
    noop(RULE, "from trl import SFTConfig\na = SFTConfig(output_dir='o', overwrite_output_dir=True)\n")


def test_dropped_where_it_did_nothing():
    """smol-course's notebooks (`use_mps_device=(True if device == "mps" else False)`, `use_mps_device=device ==
    "mps"`), gerad_llm's `RewardConfig(use_mps_device=True)`, and `save_safetensors=True` (the 4.x default)."""
    check(RULE, """\
        from trl import SFTConfig, RewardConfig
        a = SFTConfig(
            output_dir="o",
            use_mps_device=(
                True if device == "mps" else False
            ),  # Set to True if you have a Mac
            hub_model_id=name,
        )
        b = RewardConfig("o", use_mps_device=device == "mps", save_safetensors=True)
        c = RewardConfig("o", use_mps_device=True)
        """, """\
        from trl import SFTConfig, RewardConfig
        a = SFTConfig(
            output_dir="o",
            hub_model_id=name,
        )
        b = RewardConfig("o")
        c = RewardConfig("o")
        """)
    # sayands/noisy-lms' KTO/PPOv2/reward/SFT configs: half_precision_backend="auto", the 4.x default
    check(RULE, "from trl import KTOConfig\na = KTOConfig('o', half_precision_backend=\"auto\", fp16_backend='auto')\n",
          "from trl import KTOConfig\na = KTOConfig('o')\n")
    for field, value in (("half_precision_backend", '"apex"'), ("half_precision_backend", '"cpu_amp"'),
                         ("fp16_backend", "backend")):
        out, findings = run(RULE, f"from trl import SFTConfig\na = SFTConfig('o', {field}={value})\n")
        assert out.splitlines()[1].startswith(f"# TODO(trl-compat): TrainingArguments({field}=) was")
        assert findings[0].message.endswith("apex/amp backends are gone: drop it (native AMP)")
        assert f"{field}={value}" in out
    for value in ("args.use_mps_device", "is_mps()"):  # a property or a call may run code: marked, kept
        out, findings = run(RULE, f"from trl import SFTConfig\na = SFTConfig('o', use_mps_device={value})\n")
        assert out.splitlines()[1].startswith("# TODO(trl-compat): TrainingArguments(use_mps_device=) was removed")
        assert f"use_mps_device={value}" in out


def test_what_4_56_did_with_them():
    """The facts the drops rest on, read in the transformers 4.56.2 wheel (the floor of TRL 1.13-1.16; tests/wheels.txt):
    no module but `training_args.py` names `use_mps_device`, which reads it once, in its deprecation branch (a warning,
    and a ValueError when the device is not MPS); `save_safetensors` defaults to True."""
    wheel = Path(os.environ.get("TRL_COMPAT_WHEELS", ".cache/wheels")) / "transformers-4.56.2-py3-none-any.whl"
    if not wheel.is_file():
        pytest.skip("no transformers 4.56.2 wheel (make test downloads it)")
    with zipfile.ZipFile(wheel) as z:
        readers = [n for n in z.namelist() if n.endswith(".py") and b"use_mps_device" in z.read(n)]
        source = z.read("transformers/training_args.py").decode()
    assert readers == ["transformers/training_args.py"]
    assert source.count("self.use_mps_device") == 1
    start = source.index("if self.use_mps_device:")
    branch = source[start:source.index("if self.use_cpu:", start)]
    assert "warnings.warn(" in branch and 'if device.type != "mps":' in branch and "raise ValueError(" in branch
    assert re.search(r"save_safetensors: (?:Optional\[bool\]|bool) = field\(\s*default=True,", source)
    # half_precision_backend defaults to "auto", which the Trainer resolves itself; fp16_backend="auto" is not copied
    assert re.search(r'half_precision_backend: str = field\(\s*default="auto",', source)
    assert 'if self.fp16_backend and self.fp16_backend != "auto":' in source


def test_the_tables_are_the_atlas_diff():
    atlas = Atlas.load("transformers")
    old = atlas.config_fields("4.57.6", "transformers.TrainingArguments")
    new = atlas.config_fields("5.0.0", "transformers.TrainingArguments")
    # overwrite_output_dir: rule overwrite-output-dir
    assert set(RENAMED) | set(DROPPED) | set(DECIDE) | {"overwrite_output_dir"} == {f for f in set(old) - set(new)
                                                                      if not f.startswith("_")}
    for successor in RENAMED.values():
        assert successor in atlas.config_fields("4.56.2", "transformers.TrainingArguments") and successor in new


def test_noop():
    noop(RULE, "from transformers import TrainingArguments\nTrainingArguments('o', no_cuda=True)\n",
         stack={"transformers": "4.57.6"})
    noop(RULE, "from transformers import TrainingArguments\nTrainingArguments('o', use_cpu=True)\n")
