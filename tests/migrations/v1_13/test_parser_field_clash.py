"""parser-field-clash: a project dataclass parsed beside a TRL config that declares the same field on the target."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import pytest

from compat.migrate.runner import migrate_paths
from migrations import get

SCRIPT = """\
from dataclasses import dataclass

from transformers import HfArgumentParser, TrainingArguments
from trl import SFTConfig, TrlParser

from args import ModelArgs


@dataclass
class Fine:
    model_name: str = "x"


@dataclass
class Mine(SFTConfig):
    trust_remote_code: bool = True


args, training_args = TrlParser((ModelArgs, SFTConfig)).parse_args_and_config()
a, b = TrlParser((Fine, SFTConfig)).parse_args_and_config()
(c,) = TrlParser((Mine,)).parse_args_and_config()
d, e = HfArgumentParser((ModelArgs, TrainingArguments)).parse_args_into_dataclasses()
"""
ARGS = "from dataclasses import dataclass\n\n\n@dataclass\nclass ModelArgs:\n    trust_remote_code: bool = False\n"


def test_the_installed_trl_refuses_the_clash():
    """The oracle: TRL 1.16's SFTConfig declares trust_remote_code, so a parser of a project class declaring it too
    fails in its constructor (miyako6105/llm-train); TrainingArguments does not declare it."""
    from transformers import HfArgumentParser, TrainingArguments
    from trl import SFTConfig, TrlParser

    @dataclass
    class ModelArgs:
        trust_remote_code: bool = False

    with pytest.raises(argparse.ArgumentError, match="--trust_remote_code.*conflicting option strings"):
        TrlParser((ModelArgs, SFTConfig))
    HfArgumentParser((ModelArgs, TrainingArguments))


def test_the_parser_call_is_marked(tmp_path: Path):
    (tmp_path / "train.py").write_text(SCRIPT, encoding="utf-8")
    (tmp_path / "args.py").write_text(ARGS, encoding="utf-8")
    report = migrate_paths([str(tmp_path)], rules=[get("parser-field-clash")], allow_dirty=True)
    out = (tmp_path / "train.py").read_text(encoding="utf-8")
    manual = [f for e in report.files for f in e.findings if f.severity == "manual"]
    assert len(manual) == 1 and manual[0].line == 19, manual
    assert "ModelArgs declares trust_remote_code, which SFTConfig has too" in manual[0].message
    assert out == SCRIPT.replace("args, training_args =", "# TODO(trl-compat): ModelArgs declares trust_remote_code, "
                                 "which SFTConfig... [parser-field-clash]\nargs, training_args =")
    assert (tmp_path / "args.py").read_text(encoding="utf-8") == ARGS
