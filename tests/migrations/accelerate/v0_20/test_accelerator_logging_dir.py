"""`accelerator-logging-dir`: before/after and no-op cases."""

from __future__ import annotations

from migrations.accelerate.v0_20.accelerator_logging_dir import MIGRATION as RULE
from migrations.atlas import Atlas
from tests.migrations._driver import check, noop, run


def test_moved_into_a_project_configuration():
    # sunzeyeah/RLHF src/models/trainer.py
    check(RULE, "from accelerate import Accelerator  # type: ignore\n\n"
                "acc = Accelerator(log_with=config.train.tracker, logging_dir=config.train.logging_dir)\n",
          "from accelerate import Accelerator  # type: ignore\nfrom accelerate.utils import ProjectConfiguration\n\n"
          "acc = Accelerator(\n    log_with=config.train.tracker,\n"
          "    project_config=ProjectConfiguration(logging_dir=config.train.logging_dir),\n)\n")
    # in place (evaluation order kept), project_dir= beside it kept, an existing import reused
    check(RULE, "import accelerate\nfrom accelerate.utils import ProjectConfiguration\n\n"
                "acc = accelerate.Accelerator(logging_dir=d(), project_dir=p())\n",
          "import accelerate\nfrom accelerate.utils import ProjectConfiguration\n\n"
          "acc = accelerate.Accelerator(project_config=ProjectConfiguration(logging_dir=d()), project_dir=p())\n")


def test_marked_when_not_the_same():
    for call in ("Accelerator(logging_dir='l', project_config=c)", "Accelerator(logging_dir='l', **kw)",
                 "Accelerator('fp16', logging_dir='l')"):
        out, findings = run(RULE, f"from accelerate import Accelerator\nacc = {call}\n")
        assert out.splitlines()[1].startswith("# TODO(trl-compat): Accelerator(logging_dir=) was removed"), call
        assert out.splitlines()[2] == f"acc = {call}" and not any(f.changed for f in findings)
    # another ProjectConfiguration in the module
    out, _ = run(RULE, "from accelerate import Accelerator\nfrom mylib import ProjectConfiguration\n"
                       "acc = Accelerator(logging_dir='l')\n")
    assert "# TODO(trl-compat)" in out and "ProjectConfiguration(logging_dir" not in out


def test_facts():
    atlas = Atlas.load("accelerate")
    assert [e.kind for e in atlas.history("accelerate.Accelerator", "logging_dir")] == []  # never in 0.20.3-1.15.0
    for release in ("0.20.3", "1.4.0", "1.10.1", "1.15.0"):
        assert atlas.accepts(release, "accelerate.Accelerator", "project_config") == "parameter"
        assert atlas.accepts(release, "accelerate.Accelerator", "logging_dir") is None
        assert {"logging_dir", "project_dir"} <= set(atlas.config_fields(release, "accelerate.utils.ProjectConfiguration"))


def test_noop():
    noop(RULE, "from accelerate import Accelerator\nacc = Accelerator(project_dir='p')\n")
    noop(RULE, "from mylib import Accelerator\nacc = Accelerator(logging_dir='l')\n")
    noop(RULE, "from transformers import TrainingArguments\nargs = TrainingArguments(logging_dir='l')\n")
    noop(RULE, "from accelerate import Accelerator\n\n\ndef f(Accelerator):\n    return Accelerator(logging_dir='l')\n")
