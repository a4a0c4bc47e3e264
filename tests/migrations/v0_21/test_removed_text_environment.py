"""Before/after and no-op cases for `removed-text-environment`."""

from __future__ import annotations

from migrations.v0_21.removed_text_environment import MIGRATION as RULE
from tests.migrations._driver import noop, run


def test_marked():
    out, findings = run(RULE, """\
        from trl import TextEnvironment
        env = TextEnvironment(model, tok, tools, reward_fn, prompt)
    """)
    assert out.count("# TODO(trl-compat): TextEnvironment was removed in TRL 0.21") == 2
    assert len(findings) == 2


def test_noops():
    noop(RULE, """\
        import trl
        from gym import environment
        from .environment import TextEnvironment
        TextEnvironment()
    """)
