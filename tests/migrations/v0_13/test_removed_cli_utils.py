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
    """)
    assert out.splitlines()[0].startswith("# TODO(trl-compat): trl.commands.cli_utils was removed in TRL 0.13")
    assert findings and not any(f.changed for f in findings)


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
