"""`logging-dir`: before/after and no-op cases."""

from __future__ import annotations

from migrations.atlas import Atlas
from migrations.transformers.v5_15.logging_dir import MIGRATION as RULE
from tests.migrations._driver import noop, run


def test_the_issue_example_is_marked():
    src = "from trl import GRPOConfig\nargs = GRPOConfig(output_dir='o', logging_dir='logs')\n"
    out, findings = run(RULE, src)
    assert out.splitlines()[1].startswith("# TODO(trl-compat): logging_dir= was removed in transformers 5.15")
    assert "TENSORBOARD_LOGGING_DIR" in findings[0].message and len(findings) == 1


def test_facts():
    atlas = Atlas.load("transformers")
    assert "logging_dir" in atlas.config_fields("5.14.1", "transformers.TrainingArguments")
    assert "logging_dir" not in atlas.config_fields("5.15.1", "transformers.TrainingArguments")


def test_noop():
    noop(RULE, "from trl import GRPOConfig\nGRPOConfig(output_dir='o', logging_dir='logs')\n",
         stack={"transformers": "5.14.1"})
    noop(RULE, "from trl import GRPOConfig\nGRPOConfig(output_dir='o', warmup_ratio=0.0)\n")
