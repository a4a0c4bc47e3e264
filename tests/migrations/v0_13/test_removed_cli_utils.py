"""Before/after and no-op cases for `removed-cli-utils`."""

from __future__ import annotations

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


def test_script_arguments_are_marked():
    out, findings = run(RULE, """\
        from trl.commands.cli_utils import SFTScriptArguments, TrlParser
        from trl import DPOScriptArguments
        parser = TrlParser((SFTScriptArguments, DPOScriptArguments))
    """)
    assert "from trl import TrlParser" in out
    assert out.count("# TODO(trl-compat): trl.ScriptArguments has the dataset_* fields") == 3
    assert sum(f.severity == "manual" for f in findings) >= 3


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
