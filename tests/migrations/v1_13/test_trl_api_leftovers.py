"""Cases for `trl-api-leftovers`: what the check still finds after the rules is marked once per statement."""

from __future__ import annotations

from migrations.v1_13.trl_api_leftovers import MIGRATION as RULE
from tests.migrations._driver import noop, run


def test_unmarked_leftovers_get_one_marker_per_statement():
    # the shape of a TRL 0.11 RLOO subclass (unpaired-rlhf) and a keyword SFTTrainer never took (TRL's own 0.19 example)
    out, findings = run(RULE, """\
        from trl import RLOOTrainer, SFTConfig, SFTTrainer


        class UnpairedRLOOTrainer(RLOOTrainer):
            def __init__(self, config, tokenizer, policy, ref_policy, reward_model, train_dataset):
                super().__init__(
                    config=config,
                    processing_class=tokenizer,
                    policy=policy,
                    ref_policy=ref_policy,
                    reward_model=reward_model,
                    train_dataset=train_dataset,
                )


        trainer = SFTTrainer(model=m, max_length=None, args=SFTConfig(output_dir="o"))
    """)
    lines = out.splitlines()
    marks = [i for i, ln in enumerate(lines) if "TODO(trl-compat)" in ln]
    assert [lines[i + 1].strip() for i in marks] == [
        "super().__init__(", 'trainer = SFTTrainer(model=m, max_length=None, args=SFTConfig(output_dir="o"))']
    assert lines[marks[0]].startswith("        # TODO(trl-compat): RLOOTrainer() in TRL 1.16.0 requires `model`")
    assert all(len(lines[i]) <= 100 and lines[i].endswith("[trl-api-leftovers]") for i in marks)
    assert len(findings) == 2 and "takes no `reward_model=`" in findings[0].message
    assert "SFTTrainer() in TRL 1.16.0 takes no `max_length=`" in findings[1].message


def test_on_1_13_too():
    out, findings = run(RULE, "from trl import SFTTrainer\n\nSFTTrainer(model=m, max_length=None)\n", target="1.13.0")
    assert "TRL 1.13.0 takes no `max_length=`" in findings[0].message


def test_removed_config_field_reads_are_marked():
    """aligning-to-what's train/rloo.py: the RLOO v1 fields read from a parsed RLOOConfig that feeds the project's own
    copy of the v1 trainer (no rule rewrites them: the copy reads the old names too) get a marker, one per
    statement."""
    out, findings = run(RULE, """\
        from trl import ModelConfig, RLOOConfig, TrlParser

        config, model_config = TrlParser((RLOOConfig, ModelConfig)).parse_args_into_dataclasses()
        reward_model = RewardModelWrapper(config.reward_model_path)
        policy = load(config.sft_model_path, config.sft_model_path)
        episodes = config.num_train_epochs
    """)
    lines = out.splitlines()
    marks = [i for i, ln in enumerate(lines) if "TODO(trl-compat)" in ln]
    assert [lines[i + 1] for i in marks] == ["reward_model = RewardModelWrapper(config.reward_model_path)",
                                              "policy = load(config.sft_model_path, config.sft_model_path)"]
    assert "RLOOConfig in TRL 1.16.0 has no field `reward_model_path`" in lines[marks[0]]
    assert len(findings) == 2 and all(f.severity == "manual" for f in findings)


def test_noops():
    # already marked (by any rule), valid on the target, a TrainingArguments field (the library rules' business), a
    # local class named like TRL's
    noop(RULE, """\
        from trl import SFTConfig, SFTTrainer
        from mylib import RLOOTrainer

        # TODO(trl-compat): a rule marked this already [removed-config-fields]
        SFTTrainer(model=m, max_length=None)
        SFTTrainer(model=m, args=SFTConfig(output_dir="o", max_length=512, warmup_ratio=0.1))
        RLOOTrainer(config=c, policy=p)
    """)


def test_a_notebook_is_marked_in_the_cell_of_the_statement():
    """The smol-course notebooks (ja): `DPOConfig(model_name_or_path=...)`, a keyword no TRL release took, in cell 2;
    the import in cell 1 resolves it (the cells are one module)."""
    import json

    cells = [["from trl import DPOConfig\n"], ["x = 1\n", "dpo_config = DPOConfig(\n", "    model_name_or_path=name,\n",
                                                "    output_dir='o',\n", ")\n"]]
    notebook = json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "source": s, "outputs": [],
                                      "execution_count": None} for s in cells],
                           "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"
    out, findings = run(RULE, notebook, path="dpo.ipynb", dedent=False)
    new = ["".join(c["source"]) for c in json.loads(out)["cells"]]
    assert new[0] == "from trl import DPOConfig\n"
    assert new[1].splitlines()[1].startswith("# TODO(trl-compat): DPOConfig() in TRL 1.16.0 takes no")
    assert new[1].splitlines()[2] == "dpo_config = DPOConfig("
    assert [(f.cell, f.line) for f in findings] == [(1, 2)]
