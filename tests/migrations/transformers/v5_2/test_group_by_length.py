"""`group-by-length`: before/after, no-op cases, the facts from the atlas, and the helper on the installed
transformers (the sampler the real `Trainer` builds from its keywords)."""

from __future__ import annotations

from types import SimpleNamespace

from migrations.atlas import Atlas
from migrations.transformers.v5_2.group_by_length import MIGRATION as RULE
from tests.migrations._driver import assert_check_passes, check, noop, run


def test_facts():
    atlas = Atlas.load("transformers")
    for release in ("4.56.2", "4.57.6", "5.0.0", "5.1.0"):
        fields = atlas.config_fields(release, "transformers.TrainingArguments")
        assert "group_by_length" in fields and "train_sampling_strategy" not in fields, release
    for release in ("5.2.0", "5.24.0"):
        fields = atlas.config_fields(release, "transformers.TrainingArguments")
        assert "group_by_length" not in fields and "train_sampling_strategy" in fields, release


def test_variable_becomes_the_helper():
    # the corpus's shape: the flag in a module variable named like the field (so the helper has another name)
    check(RULE, """\
        from trl import SFTConfig
        group_by_length = True
        args = SFTConfig(
            output_dir="o",
            group_by_length=group_by_length,
            report_to="none",
        )
        """, """\
        from trl import SFTConfig
        from compat.trl import length_grouping

        group_by_length = True
        args = SFTConfig(
            output_dir="o",
            **length_grouping(group_by_length),
            report_to="none",
        )
        """)


def test_training_arguments_and_literals():
    check(RULE, """\
        import transformers
        import trl
        a = transformers.TrainingArguments(output_dir="o", group_by_length=True)
        b = trl.DPOConfig(output_dir="o", group_by_length=False, beta=0.1)
        """, """\
        import transformers
        import trl
        from compat.trl import length_grouping

        a = transformers.TrainingArguments(output_dir="o", **length_grouping(True))
        b = trl.DPOConfig(output_dir="o", beta=0.1)
        """)


def test_under_a_transformers_5_2_pin_a_literal_true_is_the_strategy(tmp_path):
    (tmp_path / "requirements.txt").write_text("trl>=1.13\ntransformers>=5.2\n")
    src = 'from trl import SFTConfig\nargs = SFTConfig(output_dir="o", group_by_length=True)\n'
    out, _ = run(RULE, src, path=str(tmp_path / "train.py"))
    assert out == 'from trl import SFTConfig\nargs = SFTConfig(output_dir="o", train_sampling_strategy="group_by_length")\n'
    out, _ = run(RULE, src.replace("True", "flag"), path=str(tmp_path / "train.py"))
    assert "**length_grouping(flag)" in out  # a variable may be false: the helper
    other = tmp_path / "other"
    other.mkdir()
    (other / "requirements.txt").write_text("trl>=1.13\ntransformers>=5.0\n")  # admits 5.0 / 5.1
    out, _ = run(RULE, src, path=str(other / "train.py"))
    assert "**length_grouping(True)" in out


def test_marked():
    out, findings = run(RULE, 'from trl import SFTConfig\nargs = SFTConfig(output_dir="o", group_by_length=True, **kw)\n')
    assert out.splitlines()[1].startswith("# TODO(trl-compat): TrainingArguments(group_by_length=) is gone")
    assert "splat" in findings[0].message
    out, findings = run(RULE, 'from trl import KTOConfig\nargs = KTOConfig(output_dir="o", group_by_length=True)\n')
    assert "# TODO(trl-compat)" in out and "KTOConfig" in findings[0].message
    out, findings = run(RULE, 'from trl import SFTConfig\n'
                              'args = SFTConfig(group_by_length=True, train_sampling_strategy="sequential")\n')
    assert "# TODO(trl-compat)" in out and "train_sampling_strategy=" in findings[0].message
    out, findings = run(RULE, 'from trl import SFTConfig\nfrom mylib import length_grouping\n'
                              'args = SFTConfig(output_dir="o", group_by_length=True)\n')
    assert "# TODO(trl-compat)" in out and "binds a name `length_grouping`" in findings[0].message
    # the field read elsewhere: an AttributeError on 5.2+
    out, findings = run(RULE, 'import transformers\nfrom trl import SFTConfig\n'
                              'def f(args):\n    if args.group_by_length:\n        pass\n')
    assert out.splitlines()[3].strip().startswith("# TODO(trl-compat): if this is a TrainingArguments")
    assert findings[0].severity == "manual"


def test_noop():
    noop(RULE, 'from trl import SFTConfig\nargs = SFTConfig(output_dir="o", train_sampling_strategy="group_by_length")\n')
    noop(RULE, 'import trl\nclass SFTConfig:\n    pass\nargs = SFTConfig(group_by_length=True)\n')  # a local class
    noop(RULE, 'from transformers import TrainingArguments as TA\nimport trl\n'
               'def f(TA):\n    return TA(group_by_length=True)\n')  # a parameter shadows the import
    noop(RULE, 'from .trl import SFTConfig\nimport transformers\nargs = SFTConfig(group_by_length=True)\n')  # vendored
    noop(RULE, 'from trl import SFTConfig\nimport transformers\ngroup_by_length = True\n'
               'print(group_by_length)\n')  # a plain name, not the field
    noop(RULE, 'from trl import SFTConfig\nfrom compat.trl import length_grouping\n\n'
               'args = SFTConfig(output_dir="o", **length_grouping(True))\n')  # already migrated
    # a 4.x transformers target (manifest <5): group_by_length= is valid, the rule does not run
    noop(RULE, 'from trl import SFTConfig\nimport transformers\nargs = SFTConfig(group_by_length=True)\n',
         stack={"transformers": "4.57.6"})


def test_the_helper_builds_the_samplers_of_4x():
    """On the installed transformers the helper's keywords make the real `Trainer` build what 4.56.2 built for
    `group_by_length=True` / `False` (read from its wheel: a `LengthGroupedSampler` over
    `train_batch_size * gradient_accumulation_steps` for training, over `eval_batch_size` for evaluation; else a
    `RandomSampler` and the sequential eval sampler)."""
    import dataclasses

    import pytest

    pytest.importorskip("torch")
    datasets = pytest.importorskip("datasets")
    import transformers
    from torch.utils.data import RandomSampler, SequentialSampler
    from transformers.trainer_pt_utils import LengthGroupedSampler

    from compat.trl import length_grouping

    has_field = any(f.name == "group_by_length" for f in dataclasses.fields(transformers.TrainingArguments))
    assert length_grouping(True) == ({"group_by_length": True} if has_field else
                                     {"train_sampling_strategy": "group_by_length"})
    assert length_grouping(False) == ({"group_by_length": False} if has_field else {})
    ds = datasets.Dataset.from_dict({"input_ids": [[1] * n for n in (3, 9, 5, 7)], "length": [3, 9, 5, 7]})
    for flag, train_cls, eval_cls in ((True, LengthGroupedSampler, LengthGroupedSampler),
                                      (False, RandomSampler, SequentialSampler)):
        args = transformers.TrainingArguments(output_dir="o", report_to="none", use_cpu=True,
                                              per_device_train_batch_size=2, gradient_accumulation_steps=2,
                                              per_device_eval_batch_size=3, **length_grouping(flag))
        trainer = SimpleNamespace(args=args, train_dataset=ds, processing_class=None)
        train = transformers.Trainer._get_train_sampler(trainer, ds)
        evaluation = transformers.Trainer._get_eval_sampler(trainer, ds)
        assert type(train) is train_cls and type(evaluation) is eval_cls, flag
        if flag:
            assert train.batch_size == args.train_batch_size * 2 and train.lengths == [3, 9, 5, 7]
            assert evaluation.batch_size == args.eval_batch_size


def test_the_check_accepts_the_rewrite_on_both_ends(tmp_path):
    assert_check_passes(tmp_path, "from trl import SFTConfig\nfrom compat.trl import length_grouping\n\n"
                                  'args = SFTConfig(output_dir="o", **length_grouping(True), report_to="none")\n')


def test_beside_the_warmup_helper():
    """`**warmup(...)` (rule warmup-ratio's splat) carries only warmup keywords: not a reason to refuse, either
    way round; any other `**` splat (or one of another `warmup`) is."""
    from migrations.transformers.v5_15.warmup_ratio import MIGRATION as WARMUP

    out, _ = run(RULE, 'from trl import SFTConfig\nfrom compat.trl import warmup\n\n'
                       'args = SFTConfig(output_dir="o", **warmup(r), group_by_length=g)\n')
    assert out.endswith('args = SFTConfig(output_dir="o", **warmup(r), **length_grouping(g))\n') and "TODO" not in out
    out, _ = run(WARMUP, 'from trl import SFTConfig\nfrom compat.trl import length_grouping\n\n'
                         'args = SFTConfig(output_dir="o", warmup_ratio=r, **length_grouping(g))\n')
    assert out.endswith('args = SFTConfig(output_dir="o", **warmup(r), **length_grouping(g))\n') and "TODO" not in out
    out, _ = run(RULE, 'from trl import SFTConfig\nfrom mylib import warmup\n\n'
                       'args = SFTConfig(output_dir="o", **warmup(r), group_by_length=g)\n')
    assert "# TODO(trl-compat)" in out
