"""training-args-flags: TrainingArguments flags of shell launchers that the raised transformers rejects.

The scripts are written to a temp folder in the shapes of LLaVA's trainer (YiyangZhou/POVID: `train_mem.py` runs
`train()` of `llava/train/train.py`, whose parser holds a project subclass of `transformers.TrainingArguments`) and of
a TRL script parsing `SFTConfig`; which fields each transformers release has comes from the atlas.
"""

from __future__ import annotations

from pathlib import Path

from packaging.version import Version

from compat.migrate.engine import migrate_source
from migrations.base import Options
from migrations.transformers.v4_51.training_args_flags import MIGRATION as RULE

TRAIN = '''\
from dataclasses import dataclass, field

import transformers


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="facebook/opt-125m")


@dataclass
class TrainingArguments(transformers.TrainingArguments):
    lora_enable: bool = False
    logging_dir: str = "runs"


def train():
    parser = transformers.HfArgumentParser((ModelArguments, TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
'''

TRAIN_MEM = "from llava.train.train import train\n\nif __name__ == '__main__':\n    train()\n"

LAUNCH = """\
#!/bin/bash
deepspeed llava/train/train_mem.py \\
    --lora_enable True \\
    --model_name_or_path ./checkpoints/vicuna \\
    --per_gpu_train_batch_size 16 \\
    --evaluation_strategy "no" \\
    --logging_dir runs \\
    --save_strategy "steps"
"""


def _tree(tmp_path: Path) -> Path:
    pkg = tmp_path / "llava" / "train"
    pkg.mkdir(parents=True)
    (tmp_path / "llava" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "train.py").write_text(TRAIN)
    (pkg / "train_mem.py").write_text(TRAIN_MEM)
    (tmp_path / "scripts").mkdir()
    return tmp_path / "scripts" / "finetune.sh"


def migrate(text: str, path: Path, transformers: str = "5.24.0"):
    options = Options(target_trl=Version("1.16.0"), targets=(("transformers", Version(transformers)),))
    result = migrate_source(text, options=options, rules=[RULE], path=str(path), verify_idempotent=True)
    assert result.ok, result.errors
    return result


def test_renamed_through_the_function_the_launcher_runs(tmp_path: Path) -> None:
    result = migrate(LAUNCH, _tree(tmp_path))
    assert result.text == LAUNCH.replace("--evaluation_strategy", "--eval_strategy").replace(
        "--per_gpu_train_batch_size", "--per_device_train_batch_size")
    notes = sorted(f.message for f in result.findings)
    assert notes[0].startswith("--evaluation_strategy -> --eval_strategy (TrainingArguments.evaluation_strategy is "
                               "gone by transformers 4.51")
    # --logging_dir (gone in 5.15) is the project subclass's own field here: left alone, no marker
    assert len(notes) == 2 and all(f.changed for f in result.findings)


def test_on_the_floor_only_what_4_56_lacks_is_touched(tmp_path: Path) -> None:
    result = migrate(LAUNCH, _tree(tmp_path), transformers="4.56.2")
    assert result.text == LAUNCH.replace("--evaluation_strategy", "--eval_strategy")


def test_flags_without_an_equal_successor_are_marked(tmp_path: Path) -> None:
    (tmp_path / "sft.py").write_text(
        "from transformers import HfArgumentParser\nfrom trl import SFTConfig\n\n"
        "config, = HfArgumentParser(SFTConfig).parse_args_into_dataclasses()\n")
    text = "python sft.py --output_dir out --use_mps_device --overwrite_output_dir --evaluation_strategy=steps\n"
    result = migrate(text, tmp_path / "run.sh")
    lines = result.text.splitlines()
    assert lines[0].startswith("# TODO(trl-compat): --use_mps_device, --overwrite_output_dir not accepted")
    assert lines[1] == text.rstrip().replace("--evaluation_strategy=", "--eval_strategy=")
    manual = [f.message for f in result.findings if f.severity == "manual"]
    assert manual == [("--use_mps_device, --overwrite_output_dir not accepted by sft.py on transformers 5.24.0 "
                       "(TrainingArguments lost the field in 5.0.0): drop or replace it as "
                       "MIGRATION.md#removed-training-arguments, MIGRATION.md#overwrite-output-dir says for the "
                       "keyword")]


def test_left_alone(tmp_path: Path) -> None:
    _tree(tmp_path)
    (tmp_path / "own.py").write_text(  # the script's own dataclass declares the flag
        "from dataclasses import dataclass\nfrom transformers import HfArgumentParser\n\n@dataclass\n"
        "class Args:\n    evaluation_strategy: str = 'no'\n\nargs, = HfArgumentParser(Args).parse_args_into_dataclasses()\n")
    (tmp_path / "other.py").write_text(  # a class of another module: its fields are not known
        "from transformers import HfArgumentParser\nfrom mypkg.args import Args\n\nHfArgumentParser(Args)\n")
    (tmp_path / "plain.py").write_text("import argparse\np = argparse.ArgumentParser()\n")
    text = ("python own.py --evaluation_strategy no\npython other.py --evaluation_strategy no\n"
            "python plain.py --evaluation_strategy no\npython missing.py --evaluation_strategy no\n"
            "# deepspeed llava/train/train_mem.py --evaluation_strategy no\n"
            "deepspeed llava/train/train_mem.py --eval_strategy no --save_steps 5\n")
    result = migrate(text, tmp_path / "scripts" / "run.sh")
    assert result.text == text and not result.findings
