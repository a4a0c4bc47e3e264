"""`report-to-none`: before/after, no-op cases, and the two behaviours it bridges (the installed transformers and the
4.56.2 wheel's source)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from migrations.transformers.v5_0.report_to_none import MIGRATION as RULE
from tests.migrations._driver import check, noop


def test_literal_none_becomes_all():
    # gpt4vision/R1-SGG tests/test_sampler.py, minwukim/VRL trl_new_demo.py
    check(RULE, "from trl import GRPOConfig\nfrom transformers import TrainingArguments\n"
                "a = GRPOConfig(output_dir='o', report_to=None)\nb = TrainingArguments('o', report_to=None, seed=1)\n",
          "from trl import GRPOConfig\nfrom transformers import TrainingArguments\n"
          "a = GRPOConfig(output_dir='o', report_to=\"all\")\nb = TrainingArguments('o', report_to=\"all\", seed=1)\n")


def test_noops():
    # a value that may be None, another value, not a training config, a read or a write of the attribute
    noop(RULE, "from trl import GRPOConfig\na = GRPOConfig(report_to=cfg.get('report_to'))\n")
    noop(RULE, "from trl import GRPOConfig\na = GRPOConfig(report_to='none')\n")
    noop(RULE, "from mylib import Config\na = Config(report_to=None)\n")
    noop(RULE, "from transformers import TrainingArguments\nargs.report_to = None\nprint(args.report_to)\n")


def test_none_was_all_on_4_and_is_refused_on_5(tmp_path):
    """The oracle for both sides: 4.56.2's `__post_init__` (read in its wheel) sets "all" for None; the installed
    5.x keeps `[None]`, which the Trainer's callback lookup refuses, and "all" goes through that lookup."""
    import transformers
    from packaging.version import Version
    from transformers import TrainingArguments
    from transformers.integrations import get_reporting_integration_callbacks

    if Version(transformers.__version__) < Version("5.0"):
        pytest.skip("needs transformers 5.x installed")
    args = TrainingArguments(output_dir=str(tmp_path), report_to=None)
    with pytest.raises(ValueError, match="None is not supported"):
        get_reporting_integration_callbacks(args.report_to)
    every = TrainingArguments(output_dir=str(tmp_path), report_to="all").report_to
    assert isinstance(get_reporting_integration_callbacks(every), list)
    import os
    wheel = Path(os.environ.get("TRL_COMPAT_WHEELS", Path(__file__).resolve().parents[4] / ".cache" / "wheels")) \
        / "transformers-4.56.2-py3-none-any.whl"
    if not wheel.exists():
        pytest.skip(f"no transformers 4.56.2 wheel at {wheel}")
    source = zipfile.ZipFile(wheel).read("transformers/training_args.py").decode()
    post_init = source[source.index("if self.report_to is None:"):]
    assert post_init.index('self.report_to = "all"') < post_init.index('if self.report_to == "all"')
