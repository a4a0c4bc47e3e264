"""`removed-dft-loss`: before/after and no-op cases."""

from __future__ import annotations

import textwrap

from migrations.v1_15.removed_dft_loss import MIGRATION as DFT
from tests.migrations._driver import noop, run


def test_dft_loss_to_loss_type():
    out, findings = run(DFT, """\
        from trl import SFTConfig, SFTTrainer
        from trl.trainer.sft_trainer import dft_loss

        trainer = SFTTrainer(model, args=SFTConfig(output_dir="o"), compute_loss_func=dft_loss)
    """)
    assert out == textwrap.dedent("""\
        from trl import SFTConfig, SFTTrainer

        trainer = SFTTrainer(model, args=SFTConfig(output_dir="o", loss_type="dft"))
    """)
    out, _ = run(DFT, """\
        from trl import SFTConfig, SFTTrainer
        from trl.trainer.sft_trainer import dft_loss

        trainer = SFTTrainer(model, args=SFTConfig(output_dir="o"), compute_loss_func=dft_loss)
        print(dft_loss)
    """)
    assert "from compat.trl import dft_loss" in out and 'loss_type="dft"' in out


def test_dft_loss_config_elsewhere_gets_todo():
    out, _ = run(DFT, """\
        from trl import SFTTrainer
        from trl.trainer.sft_trainer import dft_loss as dft
        SFTTrainer(model, args=cfg, compute_loss_func=dft)
    """)
    assert "from compat.trl import dft_loss as dft" in out
    assert 'set loss_type="dft"' in out and "compute_loss_func=dft)" in out
    noop(DFT, "from mylib import dft_loss\nSFTTrainer(compute_loss_func=dft_loss)\n")
