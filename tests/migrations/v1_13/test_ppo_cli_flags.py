"""ppo-cli-flags: shell launch scripts passing PPO flags to a script whose parser now holds GRPOConfig.

The PPO script is written to a temp folder in the shape of TRL 0.8's `examples/scripts/ppo.py` (ScriptArguments and
PPOConfig parsed by one HfArgumentParser); which flags its migrated parser accepts comes from migrating it for real
and from the atlas' GRPOConfig fields, never from a list in the test.
"""

from __future__ import annotations

from pathlib import Path

from migrations.v1_13.ppo_cli_flags import MIGRATION as RULE
from tests.migrations._driver import run_file

PPO_SCRIPT = '''\
from dataclasses import dataclass, field

from transformers import HfArgumentParser

from trl import AutoModelForCausalLMWithValueHead, PPOConfig, PPOTrainer


@dataclass
class ScriptArguments:
    use_peft: bool = field(default=False, metadata={"help": "whether to use peft"})
    lora_r: int = field(default=16)


parser = HfArgumentParser((ScriptArguments, PPOConfig))
args, ppo_config = parser.parse_args_into_dataclasses()
model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
ppo_trainer = PPOTrainer(ppo_config, model, None, None, dataset=None)
for batch in ppo_trainer.dataloader:
    ppo_trainer.step(batch["q"], batch["r"], batch["s"])
'''

OWN_ARGS_SCRIPT = '''\
from dataclasses import dataclass

from transformers import HfArgumentParser

from trl import PPOConfig


@dataclass
class ScriptArguments:
    log_with: str = None
    batch_size: int = 8


script_args = HfArgumentParser(ScriptArguments).parse_args_into_dataclasses()[0]
config = PPOConfig(log_with=script_args.log_with, batch_size=script_args.batch_size)
'''

LAUNCH = """\
#!/bin/bash
# PPO on IMDB
accelerate launch --config_file deepspeed_zero2.yaml ppo.py \\
    --log_with=wandb \\
    --ppo_epochs 2 \\
    --init_kl_coef 0.1 \\
    --use_peft --lora_r 8
"""


def _repo(tmp_path: Path, script: str) -> Path:
    (tmp_path / "ppo.py").write_text(script)
    (tmp_path / "scripts").mkdir()
    return tmp_path / "scripts" / "run.sh"


def migrate(text: str, path: Path):
    return run_file(RULE, text, path)


def test_flags_with_the_same_setting_are_renamed_the_rest_marked(tmp_path: Path) -> None:
    sh = _repo(tmp_path, PPO_SCRIPT)
    result = migrate(LAUNCH, sh)
    lines = result.text.splitlines()
    assert "    --report_to=wandb \\" in lines and "    --num_iterations 2 \\" in lines
    assert "    --use_peft --lora_r 8" in lines  # the script's own flags stay
    marker = lines[2]
    assert marker.startswith("# TODO(trl-compat): --init_kl_coef: not accepted by ppo.py")
    assert "ppo-cli-flags" in marker and lines[3].startswith("accelerate launch")
    assert {f.severity for f in result.findings} == {"info", "manual"}


def test_a_script_with_its_own_arguments_only_is_left_alone(tmp_path: Path) -> None:
    sh = _repo(tmp_path, OWN_ARGS_SCRIPT)
    text = "python ppo.py --log_with wandb --batch_size 8\n"
    result = migrate(text, sh)
    assert result.text == text and not result.findings


def test_commands_of_other_scripts_and_missing_scripts_are_left_alone(tmp_path: Path) -> None:
    sh = _repo(tmp_path, PPO_SCRIPT)
    text = "python other.py --log_with wandb\npython $SCRIPT --ppo_epochs 2\n# python ppo.py --ppo_epochs 2\n"
    result = migrate(text, sh)
    assert result.text == text and not result.findings


def test_readme_fences_are_migrated_and_prose_is_not(tmp_path: Path) -> None:
    (tmp_path / "ppo.py").write_text(PPO_SCRIPT)
    prose = "Run `python ppo.py --ppo_epochs 2 --init_kl_coef 0.1` to train.\n"
    text = f"# PPO\n\n{prose}\n```bash\n{LAUNCH.split(chr(10), 2)[2]}```\n"
    result = migrate(text, tmp_path / "README.md")
    lines = result.text.splitlines()
    assert prose.rstrip() in lines  # outside a fence: not a command
    fence = lines.index("```bash")
    assert lines[fence + 1].startswith("# TODO(trl-compat): --init_kl_coef: not accepted by ppo.py")
    assert "    --num_iterations 2 \\" in lines and "    --report_to=wandb \\" in lines


def test_the_config_flag_of_a_trl_parser_script_is_accepted(tmp_path: Path) -> None:
    """HollyRiver/HFRL's ppo.sh: `python PPO.py --config config/PPO_config.yaml`, the script parsing with
    `TrlParser(...).parse_args_and_config()`, which reads `--config` itself (its keys are recipe-config-keys')."""
    script = PPO_SCRIPT.replace("from transformers import HfArgumentParser\n\n", "").replace(
        "from trl import AutoModelForCausalLMWithValueHead, PPOConfig, PPOTrainer",
        "from trl import AutoModelForCausalLMWithValueHead, PPOConfig, PPOTrainer, TrlParser").replace(
        "parser = HfArgumentParser((ScriptArguments, PPOConfig))\nargs, ppo_config = parser.parse_args_into_dataclasses()",
        "parser = TrlParser((ScriptArguments, PPOConfig))\nargs, ppo_config = parser.parse_args_and_config()")
    sh = _repo(tmp_path, script)
    text = "python ppo.py --config config/ppo.yaml --init_kl_coef 0.1\n"
    result = migrate(text, sh)
    marker = result.text.splitlines()[0]
    assert marker.startswith("# TODO(trl-compat): --init_kl_coef: not accepted") and "--config" not in marker
