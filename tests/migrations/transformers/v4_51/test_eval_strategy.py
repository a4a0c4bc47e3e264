"""`eval-strategy`: before/after and no-op cases."""

from __future__ import annotations

from migrations.atlas import Atlas
from migrations.transformers.v4_51.eval_strategy import MIGRATION as RULE
from tests.migrations._driver import check, noop


def test_training_arguments_and_trl_configs():
    check(RULE, 'from transformers import TrainingArguments\nargs = TrainingArguments("o", evaluation_strategy="steps")\n',
          'from transformers import TrainingArguments\nargs = TrainingArguments("o", eval_strategy="steps")\n')
    check(RULE, 'import trl\nargs = trl.GRPOConfig(output_dir="o", evaluation_strategy="no")\n',
          'import trl\nargs = trl.GRPOConfig(output_dir="o", eval_strategy="no")\n')


def test_facts():
    atlas = Atlas.load("transformers")
    for release in ("4.56.2", "5.24.0"):
        fields = atlas.config_fields(release, "transformers.TrainingArguments")
        assert "eval_strategy" in fields and "evaluation_strategy" not in fields


def test_noop():
    noop(RULE, 'from mylib import TrainingArguments\nTrainingArguments(evaluation_strategy="steps")\n')
    noop(RULE, 'from transformers import TrainingArguments\nTrainingArguments(eval_strategy="steps")\n')
