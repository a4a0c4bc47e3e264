"""training-args-reads: reads of the TrainingArguments fields transformers 5.0 removed, on provable instances.

The rewritten read is run against the real `TrainingArguments` of the installed transformers (5.x here: the
original read is an AttributeError; 4.56.2 in the tox floor environment: both reads give the same value).
"""

from __future__ import annotations

import dataclasses

import pytest
import transformers
from packaging.version import Version

from migrations.transformers.v5_0.training_args_reads import _TRIGGERS, removed_fields
from migrations.transformers.v5_0.training_args_reads import MIGRATION as RULE
from tests.migrations._driver import check, noop, run


def test_the_fields_and_their_defaults_come_from_the_atlas():
    gone = removed_fields()
    assert set(_TRIGGERS) == {f".{f}" for f in gone}  # the prefilter names every field the atlas finds gone
    assert gone["save_safetensors"] == "True" and gone["past_index"] == "-1"
    assert "overwrite_output_dir" not in gone and "output_dir" not in gone


def test_self_args_in_trainer_subclasses():
    check(RULE, """\
        from transformers import Trainer


        class MyTrainer(Trainer):
            def _save(self, output_dir=None, state_dict=None):
                self.model.save_pretrained(output_dir, safe_serialization=self.args.save_safetensors)
                if self.args.past_index >= 0:
                    self._past = None


        class Child(MyTrainer):
            def mode(self):
                return self.args.fp16_backend
    """, """\
        from transformers import Trainer


        class MyTrainer(Trainer):
            def _save(self, output_dir=None, state_dict=None):
                self.model.save_pretrained(output_dir, safe_serialization=getattr(self.args, "save_safetensors", True))
                if getattr(self.args, "past_index", -1) >= 0:
                    self._past = None


        class Child(MyTrainer):
            def mode(self):
                return getattr(self.args, "fp16_backend", "auto")
    """)


def test_configs_bound_by_a_call_or_a_parser_and_trl_trainers():
    out, findings = run(RULE, """\
        from transformers import HfArgumentParser, TrainingArguments
        from trl import DPOConfig, DPOTrainer


        class Dpo(DPOTrainer):
            def save(self):
                return self.args.save_safetensors


        def main():
            model_args, training_args = HfArgumentParser((ModelArguments, TrainingArguments)).parse_args_into_dataclasses()
            config = DPOConfig(output_dir="out")
            return training_args.save_safetensors, config.tpu_num_cores
    """)
    assert 'return getattr(self.args, "save_safetensors", True)' in out
    assert 'return getattr(training_args, "save_safetensors", True), getattr(config, "tpu_num_cores", None)' in out
    assert len(findings) == 3 and all(f.severity == "info" for f in findings)


def test_renamed_fields_and_writes_are_marked():
    out, findings = run(RULE, """\
        from transformers import Trainer


        class MyTrainer(Trainer):
            def setup(self):
                self.args.save_safetensors = False
                return self.args.no_cuda
    """)
    assert out.count("# TODO(trl-compat)") == 2
    assert "self.args.save_safetensors = False" in out and "return self.args.no_cuda" in out
    assert any("read self.args.use_cpu" in f.message for f in findings)


def test_what_is_left_alone():
    noop(RULE, """\
        import argparse
        from transformers import Trainer, TrainingArguments


        class NotATrainer:
            def f(self):
                return self.args.save_safetensors


        class MyTrainer(Trainer):
            def f(self):
                return self.args.output_dir, self.args.overwrite_output_dir  # kept / overwrite-output-dir's


        def main(opts):
            args = argparse.ArgumentParser().parse_args()
            return args.save_safetensors, opts.save_safetensors  # a script's own option, an unknown object


        class Args(TrainingArguments):
            def g(self):
                return self.save_safetensors  # the class itself: not a Trainer's self.args
    """)


def _reads(args: object) -> dict[str, object]:
    """Each removed field read as the migrated code reads it (the getattr the rule writes, evaluated)."""
    return {f: eval(f'getattr(args, "{f}", {d})', {}, {"args": args}) for f, d in removed_fields().items()}


def test_the_rewritten_reads_run_on_the_installed_transformers(tmp_path):
    args = transformers.TrainingArguments(output_dir=str(tmp_path), report_to=[])
    fields = {f.name for f in dataclasses.fields(args)}
    reads = _reads(args)
    if Version(transformers.__version__) >= Version("5.0.0"):
        with pytest.raises(AttributeError):
            args.save_safetensors  # noqa: B018 - the read as written
        assert not fields & set(removed_fields())
        assert reads["save_safetensors"] is True and reads["past_index"] == -1
    else:  # the floor stack: the field is there, the rewritten read answers what the attribute holds
        assert reads == {f: getattr(args, f) for f in removed_fields()}
