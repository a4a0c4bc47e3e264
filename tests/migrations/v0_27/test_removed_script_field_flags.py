"""removed-script-field-flags: `--torch_dtype` on command lines of a script parsing TRL's ModelConfig.

The script is written to a temp folder in the shape of TRL 0.19's `examples/scripts/prm.py`; which flags its parser
accepts on the target comes from the atlas, never from a list in the test.
"""

from __future__ import annotations

from pathlib import Path

from migrations.v0_27.removed_script_field_flags import MIGRATION as RULE
from tests.migrations._driver import run_file

SCRIPT = '''\
from transformers import HfArgumentParser
from trl import ModelConfig, SFTConfig, ScriptArguments

parser = HfArgumentParser((ScriptArguments, SFTConfig, ModelConfig))
script_args, training_args, model_config = parser.parse_args_into_dataclasses()
'''

OWN_SCRIPT = '''\
from dataclasses import dataclass
from transformers import HfArgumentParser
from trl import SFTConfig


@dataclass
class ModelArguments:
    torch_dtype: str = "auto"


margs, targs = HfArgumentParser((ModelArguments, SFTConfig)).parse_args_into_dataclasses()
'''


def _repo(tmp_path: Path, script: str) -> Path:
    (tmp_path / "prm.py").write_text(script)
    return tmp_path / "run.sh"


def migrate(text: str, path: Path):
    return run_file(RULE, text, path)


def test_torch_dtype_renamed_reentrant_marked(tmp_path: Path) -> None:
    sh = _repo(tmp_path, SCRIPT)
    result = migrate("accelerate launch prm.py \\\n    --torch_dtype bfloat16 \\\n"
                     "    --gradient_checkpointing_use_reentrant --output_dir o\n", sh)
    lines = result.text.splitlines()
    assert lines[0].startswith("# TODO(trl-compat): prm.py rejects")
    assert lines[0].endswith("[removed-script-field-flags]") and len(lines[0]) <= 100
    assert lines[2] == "    --torch_dtype bfloat16 \\".replace("torch_dtype", "dtype")
    assert {f.severity for f in result.findings} == {"info", "manual"}
    assert result.findings[-1].message.startswith("prm.py rejects --gradient_checkpointing_use_reentrant since TRL 0.27.0")


def test_markdown_fenced_blocks_only(tmp_path: Path) -> None:
    md = tmp_path / "README.md"
    (tmp_path / "prm.py").write_text(SCRIPT)
    text = "Pass --torch_dtype to prm.py to pick it.\n\n```bash\npython prm.py --torch_dtype=auto\n```\n"
    result = migrate(text, md)
    assert result.text == text.replace("prm.py --torch_dtype=auto", "prm.py --dtype=auto")


def test_noops(tmp_path: Path) -> None:
    sh = _repo(tmp_path, OWN_SCRIPT)  # the script's own dataclass declares torch_dtype
    text = "python prm.py --torch_dtype bfloat16\npython other.py --torch_dtype bfloat16\n"
    result = migrate(text, sh)
    assert result.text == text and not result.findings
    (tmp_path / "prm.py").write_text(SCRIPT)
    text = "python prm.py --dtype bfloat16\n# python prm.py --torch_dtype bfloat16\n"
    assert migrate(text, sh).text == text
