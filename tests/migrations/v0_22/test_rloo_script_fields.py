"""Before/after and no-op cases for `rloo-script-fields` (v1 RLOOConfig's script-only fields -> the script's own
dataclass), the fact it rests on read from the v1 wheels, and the migrated parser run on the installed TRL."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest
from packaging.version import Version

import migrations
from compat.migrate.engine import migrate_source
from migrations.base import Options
from migrations.v0_22.rloo_script_fields import MIGRATION as RULE
from migrations.v0_22.rloo_script_fields import SCRIPT_ONLY
from tests.migrations._driver import assert_check_passes, check, noop, run

TRL_RLOO = """\
    from transformers import HfArgumentParser
    from trl import ModelConfig
    from trl.trainer.rloo_trainer import RLOOConfig, RLOOTrainer

    if __name__ == "__main__":
        parser = HfArgumentParser((RLOOConfig, ModelConfig))
        config, model_config = parser.parse_args_into_dataclasses()
        policy = load(config.sft_model_path, config.trust_remote_code)
        reward = load(config.reward_model_path)
        name = config.sft_model_path.split("/")[-1]

        def prepare(ds):
            return ds.map(tok, num_proc=config.dataset_num_proc)
"""


def test_trl_example_shape_gets_a_dataclass_of_its_own():
    check(RULE, TRL_RLOO, """\
        from transformers import HfArgumentParser
        from trl import ModelConfig
        from trl.trainer.rloo_trainer import RLOOConfig, RLOOTrainer
        from dataclasses import dataclass


        # trl-compat: RLOOConfig fields of TRL 0.11 - 0.21 the script reads (0.22 removed them), v1 defaults
        @dataclass
        class RLOOScriptArguments:
            sft_model_path: str = "EleutherAI/pythia-160m"
            reward_model_path: str = "EleutherAI/pythia-160m"
            dataset_num_proc: int | None = None


        if __name__ == "__main__":
            parser = HfArgumentParser((RLOOConfig, ModelConfig, RLOOScriptArguments))
            config, model_config, rloo_script_args = parser.parse_args_into_dataclasses()
            policy = load(rloo_script_args.sft_model_path, config.trust_remote_code)
            reward = load(rloo_script_args.reward_model_path)
            name = rloo_script_args.sft_model_path.split("/")[-1]

            def prepare(ds):
                return ds.map(tok, num_proc=rloo_script_args.dataset_num_proc)
    """)


def test_the_files_own_dataclass_takes_the_fields():
    """unpaired-rlhf's shape: a dataclass of the file in the tuple; `Optional` spelled as the file does; a
    `return_remaining_strings` tail; only the fields read."""
    check(RULE, """\
        from dataclasses import dataclass
        from typing import Optional

        from transformers import HfArgumentParser
        from trl import RLOOConfig, ScriptArguments


        @dataclass
        class AdditionalArguments:
            unpaired: bool = False


        parser = HfArgumentParser(
            (AdditionalArguments, ScriptArguments, RLOOConfig)
        )
        extra, script_args, training_args = parser.parse_args_into_dataclasses()
        model = load(training_args.sft_model_path, training_args.dataset_num_proc)
    """, """\
        from dataclasses import dataclass
        from typing import Optional

        from transformers import HfArgumentParser
        from trl import RLOOConfig, ScriptArguments


        @dataclass
        class AdditionalArguments:
            unpaired: bool = False

            # trl-compat: RLOOConfig fields of TRL 0.11 - 0.21 the script reads (0.22 removed them), v1 defaults
            sft_model_path: str = "EleutherAI/pythia-160m"
            dataset_num_proc: Optional[int] = None


        parser = HfArgumentParser(
            (AdditionalArguments, ScriptArguments, RLOOConfig)
        )
        extra, script_args, training_args = parser.parse_args_into_dataclasses()
        model = load(extra.sft_model_path, extra.dataset_num_proc)
    """)
    check(RULE, """\
        import trl
        from transformers import HfArgumentParser
        cfg, rest = HfArgumentParser([trl.RLOOConfig,]).parse_args_into_dataclasses(return_remaining_strings=True)
        print(cfg.reward_model_path)
    """, """\
        import trl
        from transformers import HfArgumentParser
        from dataclasses import dataclass


        # trl-compat: RLOOConfig fields of TRL 0.11 - 0.21 the script reads (0.22 removed them), v1 defaults
        @dataclass
        class RLOOScriptArguments:
            reward_model_path: str = "EleutherAI/pythia-160m"


        cfg, rloo_script_args, rest = HfArgumentParser([trl.RLOOConfig, RLOOScriptArguments,]).parse_args_into_dataclasses(return_remaining_strings=True)
        print(rloo_script_args.reward_model_path)
    """)


def test_the_class_goes_above_the_statement_that_builds_the_parser():
    """aligning-to-what's layout: code between the imports; the parser built at module level before the parse."""
    check(RULE, """\
        import signal
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

        from trl import TrlParser
        from trl.trainer.rloo_trainer import RLOOConfig
        parser = TrlParser((RLOOConfig,))
        if True:
            config, = parser.parse_args_into_dataclasses()
            print([config.reward_model_path])
    """, """\
        import signal
        from dataclasses import dataclass

        signal.signal(signal.SIGHUP, signal.SIG_IGN)

        from trl import TrlParser
        from trl.trainer.rloo_trainer import RLOOConfig


        # trl-compat: RLOOConfig fields of TRL 0.11 - 0.21 the script reads (0.22 removed them), v1 defaults
        @dataclass
        class RLOOScriptArguments:
            reward_model_path: str = "EleutherAI/pythia-160m"


        parser = TrlParser((RLOOConfig, RLOOScriptArguments))
        if True:
            config, rloo_script_args = parser.parse_args_into_dataclasses()
            print([rloo_script_args.reward_model_path])
    """)


def test_left_alone():
    # written, not only read: another reader (a trainer of the project's own) may see the attribute
    noop(RULE, """\
        from transformers import HfArgumentParser
        from trl import RLOOConfig
        config, = HfArgumentParser((RLOOConfig,)).parse_args_into_dataclasses()
        config.sft_model_path, n = "x", 1
        print(config.sft_model_path)
    """)
    # the parser serves two parse calls; its tuple is a name; a class of the tuple may declare the field
    noop(RULE, """\
        import sys
        from transformers import HfArgumentParser, TrainingArguments
        from trl import RLOOConfig
        parser = HfArgumentParser((RLOOConfig, TrainingArguments))
        if sys.argv[1].endswith(".yaml"):
            config, t = parser.parse_yaml_file(sys.argv[1])
        else:
            config, t = parser.parse_args_into_dataclasses()
        print(config.sft_model_path)
        types = (RLOOConfig,)
        cfg2, = HfArgumentParser(types).parse_args_into_dataclasses()
        print(cfg2.sft_model_path)
        cfg3, targs = HfArgumentParser((RLOOConfig, TrainingArguments)).parse_args_into_dataclasses()
        print(cfg3.sft_model_path)
    """)
    # a direct construction (rloo-v1-to-rloo lists the dropped keyword's value), a parameter, a look-alike class,
    # a string, the new names taken
    noop(RULE, """\
        from trl import RLOOConfig
        config = RLOOConfig(sft_model_path="m")
        print(config.sft_model_path, "config.sft_model_path")

        def main(config: RLOOConfig):
            return config.reward_model_path
    """)
    noop(RULE, """\
        from dataclasses import dataclass
        from transformers import HfArgumentParser

        @dataclass
        class RLOOConfig:
            sft_model_path: str = "mine"

        config, = HfArgumentParser((RLOOConfig,)).parse_args_into_dataclasses()
        print(config.sft_model_path)
    """)
    noop(RULE, """\
        from transformers import HfArgumentParser
        from trl import RLOOConfig
        rloo_script_args = None
        config, = HfArgumentParser((RLOOConfig,)).parse_args_into_dataclasses()
        print(config.sft_model_path)
    """)
    noop(RULE, """\
        from transformers import HfArgumentParser
        from trl import RLOOConfig
        dataclass = print
        config, = HfArgumentParser((RLOOConfig,)).parse_args_into_dataclasses()
        print(config.sft_model_path)
    """)


def test_the_v1_trainer_never_reads_the_fields():
    """The rule's premise, from each v1 wheel cached (`make test` downloads them): `rloo_trainer.py` has no
    `args.<field>` / `config.<field>` for the three fields, and its RLOOConfig (with OnPolicyConfig) declares them
    with the defaults the atlas gives the rule."""
    wheels = Path(os.environ.get("TRL_COMPAT_WHEELS", "/work/cache/wheels"))
    found = [wheels / f"trl-{v}-py3-none-any.whl" for v in ("0.11.4", "0.12.2", "0.19.1", "0.21.0")]
    found = [w for w in found if w.is_file()]
    if not found:
        pytest.skip("no v1 TRL wheel cached")
    for wheel in found:
        with zipfile.ZipFile(wheel) as z:
            trainer = z.read("trl/trainer/rloo_trainer.py").decode()
            config = z.read("trl/trainer/rloo_config.py").decode() + z.read("trl/trainer/utils.py").decode()
        for name in SCRIPT_ONLY:
            assert not re.search(rf"\.{name}\b", trainer), (wheel.name, name)
            assert re.search(rf"^\s+{name}: ", config, re.MULTILINE), (wheel.name, name)


@pytest.mark.slow
def test_migrated_parser_takes_the_v1_flags_on_the_installed_trl(tmp_path):
    """Every rule of the run on a v1 script's parser section; the result runs on the installed TRL and parses
    `--sft_model_path` / `--reward_model_path` / `--dataset_num_proc` to the values v1 gave (defaults too)."""
    src = textwrap.dedent("""\
        import json, sys
        from transformers import HfArgumentParser
        from trl import ModelConfig
        from trl.trainer.rloo_trainer import RLOOConfig

        parser = HfArgumentParser((RLOOConfig, ModelConfig))
        config, model_config = parser.parse_args_into_dataclasses()
        print(json.dumps([config.sft_model_path, config.reward_model_path, config.dataset_num_proc,
                          config.output_dir]))
    """)
    options = Options(target_trl=Version("1.16.0"))
    result = migrate_source(src, options=options, rules=list(migrations.select(options)),
                            path=str(tmp_path / "rloo.py"))
    assert result.ok, result.errors
    (tmp_path / "rloo.py").write_text(result.text)
    assert "rloo_script_args.sft_model_path" in result.text and "RLOOScriptArguments" in result.text
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": str(root)}
    for argv, expected in (
            (["--sft_model_path", "pol", "--reward_model_path", "rm", "--dataset_num_proc", "2"], ["pol", "rm", 2]),
            ([], ["EleutherAI/pythia-160m", "EleutherAI/pythia-160m", None])):
        done = subprocess.run([sys.executable, str(tmp_path / "rloo.py"), "--output_dir", str(tmp_path / "o"),
                               "--bf16", "False", *argv],
                              capture_output=True, text=True, env=env, check=False, cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-2000:]
        assert json.loads(done.stdout.strip().splitlines()[-1]) == [*expected, str(tmp_path / "o")]


def test_migrated_v1_script_passes_the_check(tmp_path):
    out, _ = run(RULE, TRL_RLOO)
    # the rest of the file is other rules' business: here only the field reads, held against 1.16 and 1.13
    assert_check_passes(tmp_path, out.replace("RLOOTrainer", "RLOOConfig as _unused"), transformers=("5.24.0",))
    assert_check_passes(tmp_path, out.replace("RLOOTrainer", "RLOOConfig as _unused"), transformers=("5.24.0",),
                        target_trl="1.13.0")


def test_argument_classes_of_another_module_are_read_from_the_repository(tmp_path):
    """sayands/noisy-lms: `TrlParser((RLOOConfig, TokenizerConfig, ModelConfig, DatasetConfig))`, the two argument
    classes plain dataclasses of `src/configs.py`. A class the rule cannot read may declare the field (argparse's
    conflict error), so it was left to a marker; the run's index now reads their fields. One that declares it, or
    derives from a base the index cannot resolve, still leaves the read to the marker."""
    from compat.migrate import migrate_paths

    (tmp_path / "src").mkdir()
    configs = ("from dataclasses import dataclass\n\n\n@dataclass\nclass TokenizerConfig:\n    tokenizer_path: str = ''\n"
               "\n\n@dataclass\nclass Loader:\n    reward_model_path: str = 'rm'\n\n\n"
               "@dataclass\nclass Opaque(make_base()):\n    x: int = 0\n")
    (tmp_path / "src" / "configs.py").write_text(configs, encoding="utf-8")
    script = ("from trl import RLOOConfig, TrlParser\nfrom src.configs import {cls}\n\n"
              "parser = TrlParser((RLOOConfig, {cls}))\nconfig, extra = parser.parse_args_into_dataclasses()\n"
              "print(config.reward_model_path)\n")
    for cls, moved in (("TokenizerConfig", True), ("Loader", False), ("Opaque", False)):
        (tmp_path / "train.py").write_text(script.format(cls=cls), encoding="utf-8")
        migrate_paths([str(tmp_path)], rules=[RULE], allow_dirty=True)
        out = (tmp_path / "train.py").read_text(encoding="utf-8")
        assert ("print(rloo_script_args.reward_model_path)" in out) is moved, (cls, out)
        assert (f"TrlParser((RLOOConfig, {cls}, RLOOScriptArguments))" in out) is moved, (cls, out)
    assert (tmp_path / "src" / "configs.py").read_text(encoding="utf-8") == configs
