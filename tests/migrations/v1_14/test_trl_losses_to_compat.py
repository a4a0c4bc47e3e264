"""`trl-losses-to-compat`: before/after and no-op cases."""

from __future__ import annotations

from migrations.v1_14.trl_losses_to_compat import MIGRATION as LOSSES
from tests.migrations._driver import check, noop, run


def test_trl_losses_to_compat_losses():
    check(LOSSES, """\
        from trl.losses import FusedLinearDPOLoss, FusedLinearGRPOLoss as G
        import trl.losses
        from trl.losses.jsd_loss import FusedLinearJSDLoss

        a = FusedLinearDPOLoss(beta=0.1)
        b = trl.losses.FusedLinearKTOLoss()
    """, """\
        from compat.losses import FusedLinearDPOLoss, FusedLinearGRPOLoss as G
        from compat.losses import FusedLinearJSDLoss
        import compat.losses

        a = FusedLinearDPOLoss(beta=0.1)
        b = compat.losses.FusedLinearKTOLoss()
    """)


def test_trl_losses_kept_for_1_13_and_noops():
    src = "from trl.losses import FusedLinearDPOLoss\n"
    assert run(LOSSES, src, target="1.13.0")[0] == src
    assert run(LOSSES, src, target="1.14.0")[0] == "from compat.losses import FusedLinearDPOLoss\n"
    noop(LOSSES, "from torch.nn import losses\nfrom compat.losses import FusedLinearDPOLoss\n")
