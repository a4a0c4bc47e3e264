"""trust-remote-code-flag: `--trust_remote_code` is still accepted when the parser holds a training config with the
field (TRL 1.7+), and marked when it does not (the atlas decides which)."""

from __future__ import annotations

from pathlib import Path

from migrations.v1_7.trust_remote_code_flag import MIGRATION as RULE
from tests.migrations._driver import run_file


def _script(config: str) -> str:
    trl = "" if config == "Mine" else f", {config}"
    return ("from dataclasses import dataclass\nfrom transformers import HfArgumentParser\n"
            f"from trl import ModelConfig{trl}, ScriptArguments\n\n\n@dataclass\nclass Mine:\n    output_dir: str = 'o'\n\n\n"
            f"parser = HfArgumentParser((ScriptArguments, {config}, ModelConfig))\n"
            "script_args, training_args, model_config = parser.parse_args_into_dataclasses()\n")


def migrate(text: str, path: Path):
    return run_file(RULE, text, path)


def test_marked_without_a_config_that_takes_it(tmp_path: Path) -> None:
    (tmp_path / "prm.py").write_text(_script("Mine"))
    result = migrate("python prm.py --trust_remote_code --output_dir o\n", tmp_path / "run.sh")
    lines = result.text.splitlines()
    assert lines[0].startswith("# TODO(trl-compat): prm.py rejects --trust_remote_code since TRL 1.7.0")
    assert lines[1] == "python prm.py --trust_remote_code --output_dir o"
    assert "SFTConfig.trust_remote_code" in result.findings[0].message


def test_left_alone_when_the_training_config_takes_it(tmp_path: Path) -> None:
    (tmp_path / "sft.py").write_text(_script("SFTConfig"))
    text = "python sft.py --trust_remote_code --output_dir o\n"
    result = migrate(text, tmp_path / "run.sh")
    assert result.text == text and not result.findings
