"""`removed-training-arguments`: before/after and no-op cases."""

from __future__ import annotations

from migrations.atlas import Atlas
from migrations.transformers.v5_0.removed_training_arguments import DECIDE, RENAMED
from migrations.transformers.v5_0.removed_training_arguments import MIGRATION as RULE
from tests.migrations._driver import check, noop, run


def test_renamed_and_marked():
    check(RULE, "from transformers import TrainingArguments\na = TrainingArguments('o', no_cuda=True, per_gpu_train_batch_size=4)\n",
          "from transformers import TrainingArguments\na = TrainingArguments('o', use_cpu=True, per_device_train_batch_size=4)\n")
    out, findings = run(RULE, "from trl import SFTConfig\na = SFTConfig(output_dir='o', save_safetensors=True)\n")
    assert out.splitlines()[1].startswith("# TODO(trl-compat): TrainingArguments(save_safetensors=) was")
    assert findings[0].message.startswith("TrainingArguments(save_safetensors=) was removed")
    # overwrite_output_dir= is the rule overwrite-output-dir's
    noop(RULE, "from trl import SFTConfig\na = SFTConfig(output_dir='o', overwrite_output_dir=True)\n")


def test_the_tables_are_the_atlas_diff():
    atlas = Atlas.load("transformers")
    old = atlas.config_fields("4.57.6", "transformers.TrainingArguments")
    new = atlas.config_fields("5.0.0", "transformers.TrainingArguments")
    # overwrite_output_dir: rule overwrite-output-dir
    assert set(RENAMED) | set(DECIDE) | {"overwrite_output_dir"} == {f for f in set(old) - set(new)
                                                                      if not f.startswith("_")}
    for successor in RENAMED.values():
        assert successor in atlas.config_fields("4.56.2", "transformers.TrainingArguments") and successor in new


def test_noop():
    noop(RULE, "from transformers import TrainingArguments\nTrainingArguments('o', no_cuda=True)\n",
         stack={"transformers": "4.57.6"})
    noop(RULE, "from transformers import TrainingArguments\nTrainingArguments('o', use_cpu=True)\n")
