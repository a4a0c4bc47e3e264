"""`deprecated-options-1-15`: before/after and no-op cases."""

from __future__ import annotations

from migrations.v1_15.deprecated_options_1_15 import MIGRATION as DEPRECATED
from tests.migrations._driver import noop, run


def test_deprecated_1_15_options():
    out, _ = run(DEPRECATED, """\
        from trl import SFTTrainer, SFTConfig
        SFTTrainer(model, args=SFTConfig(label_smoothing_factor=0.1), compute_loss_func=my_loss)
    """)
    assert out.count("# TODO(trl-compat)") == 2
    noop(DEPRECATED, """\
        from trl import SFTTrainer, SFTConfig
        from compat.trl import dft_loss
        SFTTrainer(model, args=SFTConfig(label_smoothing_factor=0.0), compute_loss_func=dft_loss)
    """)
    noop(DEPRECATED, "from transformers import Trainer\nTrainer(model, compute_loss_func=f)\n")
