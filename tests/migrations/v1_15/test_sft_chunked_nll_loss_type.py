"""`sft-chunked-nll-loss-type`: before/after and no-op cases (the migrator's own tests in tests/migrate use this rule
as their example too)."""

from __future__ import annotations

from migrations.v1_15.sft_chunked_nll_loss_type import MIGRATION as RULE
from tests.migrations._driver import check, noop, run


def test_chunked_nll_becomes_nll():
    findings = check(RULE, """\
        from trl import SFTConfig

        cfg = SFTConfig(output_dir="out", loss_type="chunked_nll")
    """, """\
        from trl import SFTConfig

        cfg = SFTConfig(output_dir="out", loss_type="nll")
    """)
    assert [f.anchor for f in findings] == ["sft-chunked-nll"]


def test_noops():
    noop(RULE, 'from trl import SFTConfig\ncfg = SFTConfig(loss_type="nll")\n')
    noop(RULE, 'from trl import SFTConfig\ncfg = SFTConfig(loss_type="dft")  # not chunked_nll\n')
    noop(RULE, 'from trl import SFTConfig\ncfg = SFTConfig(loss_type="chunked_nll")\n', target="1.14.0")


def test_other_sft_config_is_flagged_not_rewritten():
    src = 'from mylib import SFTConfig\ncfg = SFTConfig(loss_type="chunked_nll")\n'
    out, findings = run(RULE, src)
    assert out.replace(out.splitlines()[1] + "\n", "") == src  # only a marker line was added
    assert out.splitlines()[1].startswith('# TODO(trl-compat): "chunked_nll" is a deprecated alias of "nll"')
    assert [f.changed for f in findings] == [False]
