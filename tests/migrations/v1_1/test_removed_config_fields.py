"""Cases for `removed-config-fields`, and its table checked against the installed TRL."""

from __future__ import annotations

import pytest

from migrations.v1_1 import removed_config_fields as mod
from migrations.v1_1.removed_config_fields import MIGRATION as RULE
from tests.migrations._driver import noop, run


def test_removed_fields_are_marked():
    out, findings = run(RULE, """\
        from trl import DPOConfig
        from trl.experimental.orpo import ORPOConfig

        cfg = DPOConfig(output_dir="o", beta=0.1, max_prompt_length=128, rpo_alpha=0.5)
        o = ORPOConfig(output_dir="o", max_length=64)
    """)
    lines = out.splitlines()
    assert lines[3] == "# TODO(trl-compat): DPOConfig(max_prompt_length=) is gone since TRL 0.28.0 [removed-config-fields]"
    assert findings[0].message == ("DPOConfig(max_prompt_length=) is gone since TRL 0.28.0: truncation is "
                                   "on max_length (prompt+completion) now")
    assert lines[4].startswith("# TODO(trl-compat): DPOConfig(rpo_alpha=) is gone")
    assert 'loss_type=["sigmoid", "sft"]' in findings[1].message
    assert lines[5].startswith("cfg = DPOConfig(") and len(findings) == 2


def test_noops():
    noop(RULE, """\
        from trl import DPOConfig, SFTConfig
        DPOConfig(output_dir="o", beta=0.1, max_length=512, truncation_mode="keep_start")
        SFTConfig(output_dir="o", use_liger_kernel=True)
    """)
    noop(RULE, """\
        from mylib import DPOConfig
        import trl
        DPOConfig(max_prompt_length=3)
        s = "DPOConfig(max_prompt_length=3)"
    """)


@pytest.mark.slow  # imports trl
def test_table_matches_the_installed_trl():
    import dataclasses
    import inspect

    import trl
    from trl.experimental.cpo import CPOConfig
    from trl.experimental.orpo import ORPOConfig

    classes = {"SFTConfig": trl.SFTConfig, "DPOConfig": trl.DPOConfig, "KTOConfig": trl.KTOConfig,
               "ORPOConfig": ORPOConfig, "CPOConfig": CPOConfig}
    for name, fields in mod.REMOVED.items():
        have = {f.name for f in dataclasses.fields(classes[name])} | set(inspect.signature(classes[name]).parameters)
        assert not set(fields) & have, (name, set(fields) & have)
