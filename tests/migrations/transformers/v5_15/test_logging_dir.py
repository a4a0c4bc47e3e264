"""`logging-dir`: before/after, marked and no-op cases, the facts from the atlas, and the helper on the installed
transformers."""

from __future__ import annotations

import os

import pytest

from migrations.atlas import Atlas
from migrations.transformers.v5_15.logging_dir import MIGRATION as RULE
from tests.migrations._driver import assert_check_passes, check, noop, run


def test_facts():
    atlas = Atlas.load("transformers")
    assert "logging_dir" in atlas.config_fields("4.56.2", "transformers.TrainingArguments")
    assert "logging_dir" in atlas.config_fields("5.14.1", "transformers.TrainingArguments")
    assert "logging_dir" not in atlas.config_fields("5.15.1", "transformers.TrainingArguments")


def test_tensorboard_off_becomes_the_helper():
    """A config with no report_to= (the 5.x default "none"; 4.x's "all" ran TensorBoard when installed):
    TensorBoard, the field's only reader, cannot run on 5.15+, and may on 4.x."""
    check(RULE, """\
        from trl import GRPOConfig
        c = GRPOConfig(output_dir="o", logging_dir="logs")
        """, """\
        from trl import GRPOConfig
        from compat.trl import tensorboard_dir

        c = GRPOConfig(output_dir="o", **tensorboard_dir("logs"))
        """)


def test_a_report_to_without_tensorboard_drops_the_keyword():
    """vrizz/rlhf `RewardConfig(..., logging_dir='./logs', report_to="wandb")`, brevdev/notebooks: TensorBoard, the
    field's only reader (4.56.2 `integration_utils.py`), runs on no release with this report_to=: the keyword did
    nothing, and goes (no compat import in a notebook that never installs trl-compat). A module that reads
    `.logging_dir` back keeps its value through the helper."""
    check(RULE, """\
        from trl import GRPOConfig, RewardConfig
        a = RewardConfig(output_dir="o", logging_dir="./logs", report_to="wandb")
        b = GRPOConfig(output_dir="o", logging_dir=f"{root}/logs", report_to=["wandb", "trackio"])
        d = GRPOConfig(output_dir="o", logging_dir="logs", report_to="none")
        """, """\
        from trl import GRPOConfig, RewardConfig
        a = RewardConfig(output_dir="o", report_to="wandb")
        b = GRPOConfig(output_dir="o", report_to=["wandb", "trackio"])
        d = GRPOConfig(output_dir="o", report_to="none")
        """)
    out, _ = run(RULE, 'from trl import GRPOConfig\na = GRPOConfig(output_dir="o", logging_dir="l", report_to="wandb")\n'
                       "os.makedirs(a.logging_dir)\n")
    assert '**tensorboard_dir("l")' in out


def test_transformers_4_reads_logging_dir_only_in_the_tensorboard_callback():
    import zipfile
    from pathlib import Path

    wheel = Path(__file__).resolve().parents[4] / ".cache" / "wheels" / "transformers-4.56.2-py3-none-any.whl"
    if not wheel.exists():
        pytest.skip("the transformers 4.56.2 wheel is not cached (make .cache/wheels/.downloaded)")
    with zipfile.ZipFile(wheel) as zf:
        readers = sorted(n for n in zf.namelist() if n.endswith(".py") and not n.startswith("transformers/models/")
                         and "args.logging_dir" in zf.read(n).decode("utf-8", "replace"))
    assert readers == ["transformers/integrations/integration_utils.py"]


def test_under_a_transformers_5_15_pin_the_keyword_is_dropped(tmp_path):
    (tmp_path / "requirements.txt").write_text("trl>=1.13\ntransformers>=5.15\n")
    src = 'from transformers import TrainingArguments\nargs = TrainingArguments("o", logging_dir="l", report_to="wandb")\n'
    out, findings = run(RULE, src, path=str(tmp_path / "train.py"))
    assert out == 'from transformers import TrainingArguments\nargs = TrainingArguments("o", report_to="wandb")\n'
    assert [f.severity for f in findings] == ["info"]


def test_tensorboard_on_sets_the_environment_variable_on_5_15():
    """TensorBoard may read the folder (the duke-trust-lab course: report_to="tensorboard"; a report_to= that is not
    a literal; a splat that may carry it): `tensorboard=True`, the folder as TENSORBOARD_LOGGING_DIR on 5.15+."""
    for call in ('GRPOConfig(report_to="tensorboard", logging_dir=f"{o}/l")',
                 'GRPOConfig(report_to=["all"], logging_dir=f"{o}/l")',
                 'GRPOConfig(report_to=a.report_to, logging_dir=f"{o}/l")',
                 # 4.x read None as "all" (gpt4vision/R1-SGG tests/test_sampler.py; rule report-to-none)
                 'GRPOConfig(report_to=None, logging_dir=f"{o}/l")',
                 'GRPOConfig(logging_dir=f"{o}/l", **settings)'):
        out, findings = run(RULE, f"from trl import GRPOConfig\nconfig = {call}\n")
        assert out.splitlines()[1] == "from compat.trl import tensorboard_dir"
        assert call.replace('logging_dir=f"{o}/l"', '**tensorboard_dir(f"{o}/l", tensorboard=True)') in out
        assert [f.severity for f in findings] == ["info"] and "TENSORBOARD_LOGGING_DIR" in findings[0].message


def test_a_splat_beside_an_explicit_report_to_cannot_carry_it():
    """georgian-io/LLM-Finetuning-Toolkit: `report_to="none"` and `**self._training_args.model_dump()`; the splat
    cannot pass report_to= again (a TypeError), so TensorBoard is off, on every release: the keyword goes."""
    check(RULE, """\
        from transformers import TrainingArguments
        args = TrainingArguments(output_dir=d, logging_dir=logs, report_to="none", **extra.model_dump())
        """, """\
        from transformers import TrainingArguments
        args = TrainingArguments(output_dir=d, report_to="none", **extra.model_dump())
        """)


def test_one_folder_per_module_else_marked():
    """The variable is the process's: where the module sets logging_dir to two folders (or assigns it elsewhere), or
    runs a hyperparameter search, a TensorBoard call is marked with the fix; the same expression twice (BAP's two
    `RewardConfig(..., logging_dir=LOG_DIR, ...)` branches) is one folder."""
    two = ('from trl import GRPOConfig\na = GRPOConfig(report_to="tensorboard", logging_dir="x")\n'
           'b = GRPOConfig(report_to="tensorboard", logging_dir="y")\n')
    for src, why in {
        two: "more than one folder",
        'from trl import GRPOConfig\na = GRPOConfig(report_to="tensorboard", logging_dir="x")\na.logging_dir = "z"\n':
            "more than one folder",
        'from trl import GRPOConfig\na = GRPOConfig(report_to="tensorboard", logging_dir="x")\n'
        't.hyperparameter_search(n_trials=3)\n': "hyperparameter_search",
    }.items():
        out, findings = run(RULE, src)
        assert "# TODO(trl-compat): logging_dir= was removed in transformers 5.15" in out
        assert why in findings[0].message and "TENSORBOARD_LOGGING_DIR" in findings[0].message
        assert "tensorboard_dir" not in out
    out, _ = run(RULE, 'from trl import RewardConfig\nif x:\n    c = RewardConfig(o, logging_dir=LOG_DIR, **s)\n'
                       'else:\n    c = RewardConfig(p, logging_dir=LOG_DIR, **s)\n')
    assert out.count("**tensorboard_dir(LOG_DIR, tensorboard=True)") == 2
    # haf-rm-anonymized/Code-for-HAF-RM: the script's own option is formatted in place, then passed once
    out, _ = run(RULE, 'from trl import DPOConfig\nargs.logging_dir = args.logging_dir.format("phi-2")\n'
                       'args.logging_dir += suffix\nc = DPOConfig(o, logging_dir=args.logging_dir, report_to=r)\n')
    assert "**tensorboard_dir(args.logging_dir, tensorboard=True)" in out and "TODO(trl-compat)" not in out
    out, findings = run(RULE, 'from trl import GRPOConfig\ntensorboard_dir = "x"\nGRPOConfig(logging_dir=tensorboard_dir)\n')
    assert "binds a name `tensorboard_dir`" in findings[0].message


def test_noop():
    noop(RULE, "from trl import GRPOConfig\nGRPOConfig(output_dir='o', logging_dir='logs')\n",
         stack={"transformers": "5.14.1"})
    noop(RULE, "from trl import GRPOConfig\nGRPOConfig(output_dir='o', warmup_ratio=0.0)\n")
    noop(RULE, "import trl\nclass GRPOConfig:\n    pass\nGRPOConfig(logging_dir='l')\n")  # a local class
    noop(RULE, "from accelerate import Accelerator\nimport transformers\nAccelerator(logging_dir='l')\n")  # not a config
    noop(RULE, 'import trl\nprint("TrainingArguments(logging_dir=...)")\n')  # a string


def test_the_helper_on_the_installed_transformers(monkeypatch, tmp_path):
    import dataclasses

    import transformers

    from compat.trl import tensorboard_dir

    monkeypatch.delenv("TENSORBOARD_LOGGING_DIR", raising=False)
    if any(f.name == "logging_dir" for f in dataclasses.fields(transformers.TrainingArguments)):  # <= 5.14
        assert tensorboard_dir("l") == {"logging_dir": "l"} == tensorboard_dir("l", tensorboard=True)
        args = transformers.TrainingArguments(output_dir="o", report_to="none", **tensorboard_dir("runs/x"))
        assert args.logging_dir == "runs/x"
        return
    assert tensorboard_dir("l") == {} and "TENSORBOARD_LOGGING_DIR" not in os.environ
    transformers.TrainingArguments(output_dir="o", report_to="none", **tensorboard_dir("l"))  # accepted
    # 5.15+: the folder where the TensorBoard callback of a Trainer built afterwards reads it
    assert tensorboard_dir(tmp_path / "tb", tensorboard=True) == {}
    assert os.environ["TENSORBOARD_LOGGING_DIR"] == str(tmp_path / "tb")
    # where the installed 5.15+ callback looks for it (tensorboard itself is not installed here: read, not run)
    import inspect

    from transformers.integrations import TensorBoardCallback

    assert 'os.getenv("TENSORBOARD_LOGGING_DIR"' in inspect.getsource(TensorBoardCallback.__init__)


def test_the_check_accepts_the_rewrite_on_both_ends(tmp_path):
    assert_check_passes(tmp_path, "from trl import GRPOConfig\nfrom compat.trl import tensorboard_dir\n\n"
                                  'args = GRPOConfig(output_dir="o", **tensorboard_dir("logs"), report_to="wandb")\n'
                                  'tb = GRPOConfig(output_dir="o", report_to="tensorboard", '
                                  '**tensorboard_dir("tb", tensorboard=True))\n')


def test_a_project_subclass_of_a_config_takes_the_rewrite(tmp_path):
    """jackfsuia/nanoRLHF: `@dataclass class RLOOConfig(PPOConfig)` (fields of its own, no `__init__`) built with
    `logging_dir=`, a TypeError on 5.15+ like the config's own call; the run's index of the project's classes shows
    it takes TrainingArguments' fields. A subclass with its own `__init__`, or declaring `report_to` itself (its own
    default: TensorBoard may be on), is left alone."""
    from compat.migrate.runner import migrate_paths
    from migrations import get

    source = ("from dataclasses import dataclass\n\nfrom transformers import TrainingArguments\n\n\n@dataclass\n"
              "class RunConfig(TrainingArguments):\n    total_episodes: int = 10\n\n\n@dataclass\n"
              "class OwnDefault(TrainingArguments):\n    report_to: str = 'tensorboard'\n\n\n"
              "class OwnInit(TrainingArguments):\n    def __init__(self, **kw):\n        super().__init__(**kw)\n\n\n"
              "a = RunConfig(output_dir='o', logging_dir='logs', report_to='wandb')\n"
              "b = OwnDefault(output_dir='o', logging_dir='logs')\n"
              "c = OwnInit(output_dir='o', logging_dir='logs', report_to='wandb')\n")
    (tmp_path / "train.py").write_text(source, encoding="utf-8")
    migrate_paths([str(tmp_path)], rules=[get("logging-dir")], allow_dirty=True)
    out = (tmp_path / "train.py").read_text(encoding="utf-8")
    assert "a = RunConfig(output_dir='o', report_to='wandb')\n" in out, out
    assert "b = OwnDefault(output_dir='o', logging_dir='logs')\n" in out
    assert "c = OwnInit(output_dir='o', logging_dir='logs', report_to='wandb')\n" in out
