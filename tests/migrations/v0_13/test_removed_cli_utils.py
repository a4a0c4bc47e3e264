"""Before/after and no-op cases for `removed-cli-utils`."""

from __future__ import annotations

import pytest

from migrations.v0_13.removed_cli_utils import MIGRATION as RULE
from tests.migrations._driver import check, noop, run


def test_parser_and_zero_verbose_move_to_trl():
    check(RULE, """\
        from trl.commands.cli_utils import TrlParser, init_zero_verbose

        init_zero_verbose()
        parser = TrlParser((ScriptArgs,))
    """, """\
        from trl import TrlParser, init_zero_verbose

        init_zero_verbose()
        parser = TrlParser((ScriptArgs,))
    """)


@pytest.mark.parametrize("target", ["1.13.0", "1.16.0"])
def test_script_arguments_move_to_compat(target):
    check(RULE, """\
        from trl.commands.cli_utils import SFTScriptArguments, TrlParser
        from trl import DPOScriptArguments, ModelConfig
        from trl.commands.cli_utils import RewardScriptArguments as RSA
        parser = TrlParser((SFTScriptArguments, DPOScriptArguments, RSA, ModelConfig))
    """, """\
        from compat.trl import SFTScriptArguments
        from trl import ModelConfig, TrlParser
        from compat.trl import DPOScriptArguments
        from compat.trl import RewardScriptArguments as RSA
        parser = TrlParser((SFTScriptArguments, DPOScriptArguments, RSA, ModelConfig))
    """, target=target)


def test_trl_commands_and_module_attribute_paths():
    out, _ = run(RULE, """\
        import trl
        from trl.commands import SFTScriptArguments
        a = trl.DPOScriptArguments(dataset_name="x")
    """)
    assert "from compat.trl import SFTScriptArguments" in out
    assert "compat.trl.DPOScriptArguments(dataset_name=\"x\")" in out and "TODO" not in out


def test_other_cli_utils_names_stay_marked():
    out, findings = run(RULE, """\
        from trl.commands.cli_utils import SftScriptArguments, YamlConfigParser
        args = SftScriptArguments()
        parser = YamlConfigParser()
    """)
    lines = out.splitlines()
    assert lines[0].startswith("# TODO(trl-compat): SftScriptArguments gone, its fields split")
    assert lines[1].startswith("# TODO(trl-compat): YamlConfigParser gone")
    assert findings and not any(f.changed for f in findings)
    assert any("--packing" in f.message and "SFTConfig" in f.message for f in findings)


@pytest.mark.parametrize("name, says", [
    ("DpoScriptArguments", "--beta and --max_length are DPOConfig fields"),
    ("some_private_helper", "trl.commands.cli_utils was removed in TRL 0.13"),
])
def test_each_gone_name_says_what_to_do(name, says):
    out, findings = run(RULE, f"from trl.commands.cli_utils import {name}, TrlParser\n\nuse({name})\n")
    assert any(says in f.message for f in findings), [f.message for f in findings]
    assert "from trl import TrlParser" in out and f"from trl.commands.cli_utils import {name}" in out


def test_noops():
    noop(RULE, """\
        from trl import ScriptArguments, TrlParser
        parser = TrlParser((ScriptArguments,))
    """)
    noop(RULE, """\
        from .commands.cli_utils import TrlParser

        class SFTScriptArguments:
            pass
    """)


def test_chat_arguments_move_to_compat_unless_the_0_8_config_api_is_used():
    # TRL 0.11-0.12's examples/scripts/chat.py
    check(RULE, """\
        from trl.commands.cli_utils import ChatArguments, TrlParser, init_zero_verbose

        parser = TrlParser(ChatArguments)
        args = parser.parse_args_and_config()[0]
    """, """\
        from compat.trl import ChatArguments
        from trl import TrlParser, init_zero_verbose

        parser = TrlParser(ChatArguments)
        args = parser.parse_args_and_config()[0]
    """)
    # TRL 0.8's chat.py reads args.config and calls update_dataclasses_with_config: the copy has neither
    for tail in ('if args.config == "default":\n    pass\n', "args = parser.update_dataclasses_with_config([args])[0]\n"):
        out, findings = run(RULE, "from trl.commands.cli_utils import ChatArguments, TrlParser\n"
                            "parser = TrlParser(ChatArguments)\nargs = parser.parse_args_into_dataclasses()[0]\n" + tail)
        assert "from trl.commands.cli_utils import ChatArguments" in out and "from trl import TrlParser" in out
        assert any("TRL 0.8's config handling is gone" in f.message for f in findings)
        assert "# TODO(trl-compat): ChatArguments: use TrlParser.parse_args_and_config() [removed-cli-utils]" in out
    out, _ = run(RULE, "from trl.commands.cli_utils import ChatArguments\nargs = ChatArguments(model_name_or_path='m', "
                 "config='c')\n")
    assert "from trl.commands.cli_utils import ChatArguments" in out and "# TODO(trl-compat)" in out
