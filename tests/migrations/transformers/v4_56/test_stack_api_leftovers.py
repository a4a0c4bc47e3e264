"""Cases for `stack-api-leftovers`: what the check still finds in transformers/peft/accelerate use after the rules is
marked once per statement, at the floor and at the target of what the rewritten manifest allows."""

from __future__ import annotations

import json

from packaging.version import Version

from compat.migrate.engine import migrate_source
from migrations.base import Options
from migrations.transformers.v4_56.stack_api_leftovers import MIGRATION as RULE
from migrations.v1_13.trl_api_leftovers import MIGRATION as TRL_RULE
from tests.migrations._driver import noop, run


def _marks(out: str) -> list[tuple[str, str]]:
    lines = out.splitlines()
    return [(ln.strip(), lines[i + 1].strip()) for i, ln in enumerate(lines) if "TODO(trl-compat)" in ln]


def test_removed_at_the_target_and_added_after_the_floor():
    # lmflow's RAFT notebook (a 5.0 removal), TRL's own VL notebooks (names newer than the floor 4.56.2)
    out, findings = run(RULE, """\
        from transformers import CLIPFeatureExtractor, CLIPTextModel
        from transformers import Qwen3VLForConditionalGeneration
        from transformers.modeling_utils import load_sharded_checkpoint
    """)
    marks = _marks(out)
    assert [m[1] for m in marks] == ["from transformers import CLIPFeatureExtractor, CLIPTextModel",
                                     "from transformers import Qwen3VLForConditionalGeneration",
                                     "from transformers.modeling_utils import load_sharded_checkpoint"]
    assert marks[0][0] == ("# TODO(trl-compat): transformers 5.24.0 has no `CLIPFeatureExtractor` "
                           "[stack-api-leftovers]")
    assert marks[1][0].startswith("# TODO(trl-compat): needs transformers>=4.57.6 (raise the manifest's pin)")
    assert all(len(m[0]) <= 100 and m[0].endswith("[stack-api-leftovers]") for m in marks)
    assert "removed in 5.0.0" in findings[0].message
    assert findings[1].message.endswith("transformers 4.56.2 has no `Qwen3VLForConditionalGeneration`: added in "
                                        "4.57.6")
    assert "moved to `transformers.trainer_utils.load_sharded_checkpoint` in 5.0.0" in findings[2].message


def test_a_4x_target_checks_4x_only():
    # transformers target 4.57.6: the manifest gets `<5`, so a 5.0 removal is no problem; the floor still is 4.56.2
    src = "from transformers import CLIPFeatureExtractor\nfrom transformers import Qwen3VLForConditionalGeneration\n"
    out, _ = run(RULE, src, stack={"transformers": "4.57.6"})
    assert [m[1] for m in _marks(out)] == ["from transformers import Qwen3VLForConditionalGeneration"]
    noop(RULE, "from transformers import CLIPFeatureExtractor\n", stack={"transformers": "4.57.6"})


def test_peft_accelerate_and_inherited_config_keywords():
    out, _ = run(RULE, """\
        from accelerate import Accelerator
        from peft import prepare_model_for_int8_training
        from trl import SFTConfig

        acc = Accelerator(log_with="tensorboard", logging_dir="logs")
        args = SFTConfig(output_dir="o", warmup_ratio=0.1)
    """)
    marks = _marks(out)
    assert [m[1] for m in marks] == ["from peft import prepare_model_for_int8_training",
                                     'acc = Accelerator(log_with="tensorboard", logging_dir="logs")',
                                     'args = SFTConfig(output_dir="o", warmup_ratio=0.1)']
    assert marks[1][0].startswith("# TODO(trl-compat): Accelerator() in accelerate 1.15.0 takes no `logging_dir=`")
    assert marks[2][0].startswith("# TODO(trl-compat): SFTConfig() in TRL 1.16.0 takes no `warmup_ratio=`")
    # the TRL rule leaves the inherited keyword to this one, and this one leaves TRL's own problems to it
    noop(TRL_RULE, 'from trl import SFTConfig\nargs = SFTConfig(output_dir="o", warmup_ratio=0.1)\n')
    noop(RULE, "from trl import SFTTrainer\n\nSFTTrainer(model=m, max_length=None)\n")


def test_one_marker_per_statement_with_every_problem_in_the_finding():
    out, findings = run(RULE, """\
        from transformers.integrations import (
            default_hp_search_backend,
            is_fairscale_available,
        )
    """)
    assert len(_marks(out)) == 1 and len(findings) == 1
    assert "`default_hp_search_backend`" in findings[0].message and "`is_fairscale_available`" in findings[0].message


def test_notebook_cells_are_marked_in_place():
    notebook = {"cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# RAFT"]},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": ["import torch\n", "from transformers import CLIPFeatureExtractor, CLIPTextModel\n"]},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": ["fe = CLIPTextModel.from_pretrained('x')"]},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    text = json.dumps(notebook, indent=1) + "\n"
    options = Options(target_trl=Version("1.16.0"), targets=(("transformers", Version("5.24.0")),))
    res = migrate_source(text, options=options, rules=[RULE], path="SD256-RAFT.ipynb", verify_idempotent=True)
    assert res.ok, res.errors
    cells = json.loads(res.text)["cells"]
    assert cells[1]["source"] == [
        "import torch\n",
        "# TODO(trl-compat): transformers 5.24.0 has no `CLIPFeatureExtractor` [stack-api-leftovers]\n",
        "from transformers import CLIPFeatureExtractor, CLIPTextModel\n"]
    assert cells[2] == notebook["cells"][2] and cells[0] == notebook["cells"][0]
    assert [(f.cell, f.line) for f in res.findings] == [(1, 2)]


def test_noops():
    # valid on both ends, already marked (by any rule), a relative import of a local `transformers`, a name bound to
    # something else in its scope, no library target given
    noop(RULE, """\
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
        from peft import LoraConfig, get_peft_model
        from accelerate import Accelerator

        args = TrainingArguments(output_dir="o", eval_strategy="steps")
        acc = Accelerator(project_dir="p")
        # TODO(trl-compat): a rule marked this already [removed-tokenizer-classes]
        from transformers import BloomTokenizerFast
        from .transformers import CLIPFeatureExtractor
    """)
    noop(RULE, """\
        def f(Accelerator):
            return Accelerator(logging_dir="l")
    """)
    src = "from transformers import CLIPFeatureExtractor\n"
    options = Options(target_trl=Version("1.16.0"))
    res = migrate_source(src, options=options, rules=[RULE], path="a.py")
    assert res.text == src


def test_an_inherited_config_keyword_newer_than_the_floor():
    # TRL's own 1.9 examples: TRL 1.3 dropped its trackio_space_id field for the one TrainingArguments got in 4.57
    out, findings = run(RULE, 'from trl import SFTConfig\nargs = SFTConfig(output_dir="o", trackio_space_id="me/x")\n')
    assert _marks(out)[0][0].startswith("# TODO(trl-compat): needs transformers>=4.57.6 (raise the manifest's pin)")
    assert "takes no `trackio_space_id=`" in findings[0].message


def test_the_repository_pin_narrows_the_floor(tmp_path):
    """A repository that already requires transformers>=4.57.6 keeps that pin (it admits releases the floor does):
    a name 4.57.6 added is not marked. A pin the floor replaces (==4.38.2) leaves the floor at 4.56.2."""
    src = "from transformers import Qwen3VLForConditionalGeneration\n"
    newer = tmp_path / "newer"
    newer.mkdir()
    (newer / "requirements.txt").write_text("transformers>=4.57.6\n")
    out, _ = run(RULE, src, path=str(newer / "vl.py"))
    assert "TODO(trl-compat)" not in out
    old = tmp_path / "old"
    old.mkdir()
    (old / "requirements.txt").write_text("transformers==4.38.2\n")
    out, _ = run(RULE, src, path=str(old / "vl.py"))
    assert out.startswith("# TODO(trl-compat): needs transformers>=4.57.6")
