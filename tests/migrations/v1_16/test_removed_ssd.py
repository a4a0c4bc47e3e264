"""`removed-ssd`: before/after and no-op cases."""

from __future__ import annotations

from migrations.v1_16.removed_ssd import MIGRATION as SSD
from tests.migrations._driver import noop, run


def test_ssd():
    src = "from trl.experimental.ssd import SSDConfig, SSDTrainer\n\nSSDTrainer(args=SSDConfig())\n"
    out, findings = run(SSD, src)
    assert out.startswith("# TODO(trl-compat): trl.experimental.ssd was removed in TRL 1.16")
    assert run(SSD, src, target="1.15.0")[0] == src
    noop(SSD, "from trl.experimental.sdpo import SDPOTrainer\nssd = 1\n")
