"""`logging-dir`: before/after, marked and no-op cases, the facts from the atlas, and the helper on the installed
transformers."""

from __future__ import annotations

from migrations.atlas import Atlas
from migrations.transformers.v5_15.logging_dir import MIGRATION as RULE
from tests.migrations._driver import assert_check_passes, check, noop, run


def test_facts():
    atlas = Atlas.load("transformers")
    assert "logging_dir" in atlas.config_fields("4.56.2", "transformers.TrainingArguments")
    assert "logging_dir" in atlas.config_fields("5.14.1", "transformers.TrainingArguments")
    assert "logging_dir" not in atlas.config_fields("5.15.1", "transformers.TrainingArguments")


def test_tensorboard_off_becomes_the_helper():
    """vrizz/rlhf `RewardConfig(..., logging_dir='./logs', report_to="wandb")`, and a config with no report_to= (the
    5.x default "none"): TensorBoard, the field's only reader, cannot run on 5.15+."""
    check(RULE, """\
        from trl import GRPOConfig, RewardConfig
        a = RewardConfig(output_dir="o", logging_dir="./logs", report_to="wandb")
        b = GRPOConfig(output_dir="o", logging_dir=f"{root}/logs", report_to=["wandb", "trackio"])
        c = GRPOConfig(output_dir="o", logging_dir="logs")
        d = GRPOConfig(output_dir="o", logging_dir="logs", report_to="none")
        """, """\
        from trl import GRPOConfig, RewardConfig
        from compat.trl import tensorboard_dir

        a = RewardConfig(output_dir="o", **tensorboard_dir("./logs"), report_to="wandb")
        b = GRPOConfig(output_dir="o", **tensorboard_dir(f"{root}/logs"), report_to=["wandb", "trackio"])
        c = GRPOConfig(output_dir="o", **tensorboard_dir("logs"))
        d = GRPOConfig(output_dir="o", **tensorboard_dir("logs"), report_to="none")
        """)


def test_under_a_transformers_5_15_pin_the_keyword_is_dropped(tmp_path):
    (tmp_path / "requirements.txt").write_text("trl>=1.13\ntransformers>=5.15\n")
    src = 'from transformers import TrainingArguments\nargs = TrainingArguments("o", logging_dir="l", report_to="wandb")\n'
    out, findings = run(RULE, src, path=str(tmp_path / "train.py"))
    assert out == 'from transformers import TrainingArguments\nargs = TrainingArguments("o", report_to="wandb")\n'
    assert [f.severity for f in findings] == ["info"]


def test_marked():
    """TensorBoard may read the folder (the duke-trust-lab course: report_to="tensorboard"), or what report_to= is
    cannot be seen: the marker gives the 5.15 spelling, the environment variable."""
    for call, why in {
        'GRPOConfig(output_dir="o", report_to="tensorboard", logging_dir="l")': "includes TensorBoard",
        'GRPOConfig(output_dir="o", report_to=["all"], logging_dir="l")': "includes TensorBoard",
        'GRPOConfig(output_dir="o", report_to=args.report_to, logging_dir="l")': "not a literal",
        'GRPOConfig(output_dir="o", logging_dir="l", **settings)': "splat",
    }.items():
        out, findings = run(RULE, f"from trl import GRPOConfig\nconfig = {call}\n")
        assert out.splitlines()[1].startswith("# TODO(trl-compat): logging_dir= was removed in transformers 5.15")
        assert why in findings[0].message and "TENSORBOARD_LOGGING_DIR" in findings[0].message
        assert call in out
    out, findings = run(RULE, 'from trl import GRPOConfig\ntensorboard_dir = "x"\nGRPOConfig(logging_dir=tensorboard_dir)\n')
    assert "binds a name `tensorboard_dir`" in findings[0].message


def test_noop():
    noop(RULE, "from trl import GRPOConfig\nGRPOConfig(output_dir='o', logging_dir='logs')\n",
         stack={"transformers": "5.14.1"})
    noop(RULE, "from trl import GRPOConfig\nGRPOConfig(output_dir='o', warmup_ratio=0.0)\n")
    noop(RULE, "import trl\nclass GRPOConfig:\n    pass\nGRPOConfig(logging_dir='l')\n")  # a local class
    noop(RULE, "from accelerate import Accelerator\nimport transformers\nAccelerator(logging_dir='l')\n")  # not a config
    noop(RULE, 'import trl\nprint("TrainingArguments(logging_dir=...)")\n')  # a string


def test_the_helper_on_the_installed_transformers():
    import dataclasses

    import transformers

    from compat.trl import tensorboard_dir

    if any(f.name == "logging_dir" for f in dataclasses.fields(transformers.TrainingArguments)):  # <= 5.14
        assert tensorboard_dir("l") == {"logging_dir": "l"}
        args = transformers.TrainingArguments(output_dir="o", report_to="none", **tensorboard_dir("runs/x"))
        assert args.logging_dir == "runs/x"
        return
    assert tensorboard_dir("l") == {}
    transformers.TrainingArguments(output_dir="o", report_to="none", **tensorboard_dir("l"))  # accepted


def test_the_check_accepts_the_rewrite_on_both_ends(tmp_path):
    assert_check_passes(tmp_path, "from trl import GRPOConfig\nfrom compat.trl import tensorboard_dir\n\n"
                                  'args = GRPOConfig(output_dir="o", **tensorboard_dir("logs"), report_to="wandb")\n')
