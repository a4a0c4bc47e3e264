"""push-to-hub-use-temp-dir: the keyword against the installed transformers 5, before/after and no-op cases."""

from __future__ import annotations

import inspect

import pytest

from migrations.transformers.v5_0.push_to_hub_use_temp_dir import MIGRATION as RULE
from tests.migrations._driver import check, noop, run


def test_transformers_5_takes_no_use_temp_dir():
    """The oracle: the installed transformers 5.x has no `use_temp_dir`; 4.x (the tox `floor` env) still takes it."""
    import transformers
    from packaging.version import Version
    from transformers.utils.hub import PushToHubMixin

    if Version(transformers.__version__) < Version("5.0"):
        assert "use_temp_dir" in inspect.signature(PushToHubMixin.push_to_hub).parameters
        pytest.skip("transformers 4.x still takes use_temp_dir (the rule targets 5.x)")

    assert "use_temp_dir" not in inspect.signature(PushToHubMixin.push_to_hub).parameters
    assert "TemporaryDirectory" in inspect.getsource(PushToHubMixin.push_to_hub)


def test_true_is_dropped_other_values_marked():
    check(RULE, """\
        import transformers

        model.push_to_hub("me/model", use_temp_dir=True, commit_message="v1")
    """, """\
        import transformers

        model.push_to_hub("me/model", commit_message="v1")
    """)
    out, findings = run(RULE, """\
        from transformers import AutoModel

        model.push_to_hub(repo_name, use_temp_dir=False)
    """)
    assert out.splitlines()[2].startswith("# TODO(trl-compat): push_to_hub(use_temp_dir=False) is a TypeError")
    assert "model.push_to_hub(repo_name, use_temp_dir=False)" in out and len(findings) == 1


def test_left_alone():
    noop(RULE, """\
        import transformers

        model.push_to_hub("me/model", commit_message="v1")
        hub.upload(use_temp_dir=False)
    """)
