"""`overwrite-output-dir`: before/after, the cases that stay marked, no-op cases, and the facts from the wheels."""

from __future__ import annotations

from migrations.atlas import Atlas
from migrations.transformers.v5_0.overwrite_output_dir import MIGRATION as RULE
from tests.migrations._driver import assert_check_passes, check, noop, run


def test_facts():
    atlas = Atlas.load("transformers")
    for release, has_it in (("4.56.2", True), ("4.57.6", True), ("5.0.0", False), ("5.24.0", False)):
        assert ("overwrite_output_dir" in atlas.config_fields(release, "transformers.TrainingArguments")) is has_it


def test_dropped_from_trl_configs_and_training_arguments():
    check(RULE, """\
        from trl import SFTConfig
        args = SFTConfig(
            output_dir=output_dir,
            overwrite_output_dir=True,
            per_device_eval_batch_size=1, # originally set to 8
        )
        """, """\
        from trl import SFTConfig
        args = SFTConfig(
            output_dir=output_dir,
            per_device_eval_batch_size=1, # originally set to 8
        )
        """)
    check(RULE, """\
        import transformers as tf
        import trl
        a = tf.Seq2SeqTrainingArguments("o", overwrite_output_dir=flag, seed=1)
        b = trl.trainer.dpo_config.DPOConfig(output_dir="o", overwrite_output_dir=cfg.overwrite)
        """, """\
        import transformers as tf
        import trl
        a = tf.Seq2SeqTrainingArguments("o", seed=1)
        b = trl.trainer.dpo_config.DPOConfig(output_dir="o")
        """)


def test_marked():
    # the example scripts' last-checkpoint check reads it: the keyword stays, the read is marked too
    out, findings = run(RULE, """\
        import os
        from transformers import TrainingArguments
        args = TrainingArguments("o", overwrite_output_dir=True)
        if os.path.isdir(args.output_dir) and not args.overwrite_output_dir:
            raise ValueError("exists")
        """)
    lines = out.splitlines()
    assert lines[2].startswith("# TODO(trl-compat): TrainingArguments(overwrite_output_dir=) was removed")
    assert lines[3] == 'args = TrainingArguments("o", overwrite_output_dir=True)'
    assert lines[4].startswith("# TODO(trl-compat): if this is a TrainingArguments / TRL config")
    assert "reads .overwrite_output_dir" in findings[0].message
    # NeptuneCallback(log_checkpoints=...) reads it on 4.x
    out, findings = run(RULE, """\
        from transformers.integrations import NeptuneCallback
        from trl import SFTConfig
        args = SFTConfig(output_dir="o", overwrite_output_dir=True)
        cb = NeptuneCallback(log_checkpoints="last")
        """)
    assert "# TODO(trl-compat)" in out and "NeptuneCallback" in findings[0].message
    out, findings = run(RULE, 'from trl import SFTConfig\nargs = SFTConfig(output_dir="o", overwrite_output_dir=ask())\n')
    assert "# TODO(trl-compat)" in out and "side effects" in findings[0].message


def test_noop():
    noop(RULE, 'import trl\nclass SFTConfig:\n    pass\nargs = SFTConfig(overwrite_output_dir=True)\n')  # local class
    noop(RULE, 'from .trl import SFTConfig\nimport transformers\nargs = SFTConfig(overwrite_output_dir=True)\n')
    noop(RULE, 'from transformers import TrainingArguments as TA\nimport trl\n'
               'def f(TA):\n    return TA(overwrite_output_dir=True)\n')  # a parameter shadows the import
    noop(RULE, 'from mylib import Settings\nimport transformers, trl\ns = Settings(overwrite_output_dir=True)\n')
    noop(RULE, 'from trl import SFTConfig\nimport transformers\nargs = SFTConfig(output_dir="o")\n')  # migrated
    # a 4.x transformers target: the field is valid there, the rule does not run
    noop(RULE, 'from trl import SFTConfig\nimport transformers\nargs = SFTConfig(overwrite_output_dir=True)\n',
         stack={"transformers": "4.57.6"})


def test_the_check_accepts_the_rewrite_on_both_ends(tmp_path):
    assert_check_passes(tmp_path, 'from trl import SFTConfig\n\nargs = SFTConfig(output_dir="o", seed=1)\n')


def test_an_argparse_option_of_the_same_name_is_the_scripts_own():
    # bcmin1018/qa-model-with-reinforcement-learning RL/SFT/SFT_trl.py: `--overwrite_output_dir` is an argparse option
    # forwarded to TrainingArguments; its reads are the Namespace's, not the removed field's
    check(RULE, """\
        import argparse
        from transformers import TrainingArguments
        import trl

        def train(args):
            training_args = TrainingArguments(
                output_dir=args.output_dir,
                overwrite_output_dir=args.overwrite_output_dir,
            )
            return training_args

        if __name__ == "__main__":
            parser = argparse.ArgumentParser()
            parser.add_argument("--overwrite_output_dir", type=bool, default=True)
            args = parser.parse_args()
            print(args.overwrite_output_dir)
            train(args)
        """, """\
        import argparse
        from transformers import TrainingArguments
        import trl

        def train(args):
            training_args = TrainingArguments(
                output_dir=args.output_dir,
            )
            return training_args

        if __name__ == "__main__":
            parser = argparse.ArgumentParser()
            parser.add_argument("--overwrite_output_dir", type=bool, default=True)
            args = parser.parse_args()
            print(args.overwrite_output_dir)
            train(args)
        """)
    # annotated `argparse.Namespace` parameter
    check(RULE, """\
        from argparse import Namespace
        from trl import SFTConfig
        def build(opts: Namespace):
            return SFTConfig(output_dir="o", overwrite_output_dir=opts.overwrite_output_dir)
        """, """\
        from argparse import Namespace
        from trl import SFTConfig
        def build(opts: Namespace):
            return SFTConfig(output_dir="o")
        """)


def test_a_name_not_provably_a_namespace_still_blocks():
    # the parser is not argparse's (HfArgumentParser's dataclasses may be a TrainingArguments)
    out, findings = run(RULE, """\
        from transformers import HfArgumentParser, TrainingArguments
        parser = HfArgumentParser(TrainingArguments)
        args = parser.parse_args()
        t = TrainingArguments("o", overwrite_output_dir=True)
        if not args.overwrite_output_dir:
            pass
        """)
    assert "overwrite_output_dir=True" in out
    assert any("reads .overwrite_output_dir" in f.message for f in findings)
    # bound twice: the second binding may be anything
    out, findings = run(RULE, """\
        import argparse
        from transformers import TrainingArguments
        parser = argparse.ArgumentParser()
        args = parser.parse_args()
        args = TrainingArguments("o", overwrite_output_dir=True)
        if not args.overwrite_output_dir:
            pass
        """)
    assert "overwrite_output_dir=True" in out
    assert any("reads .overwrite_output_dir" in f.message for f in findings)
    # a function also called with something that is not a Namespace
    out, findings = run(RULE, """\
        import argparse
        from transformers import TrainingArguments
        def f(a):
            return a.overwrite_output_dir
        parser = argparse.ArgumentParser()
        args = parser.parse_args()
        f(args)
        f(TrainingArguments("o", overwrite_output_dir=True))
        """)
    assert "overwrite_output_dir=True" in out
    assert any("reads .overwrite_output_dir" in f.message for f in findings)
