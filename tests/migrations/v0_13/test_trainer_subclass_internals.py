"""Cases for `trainer-subclass-internals`."""

from __future__ import annotations

from migrations.v0_13.trainer_subclass_internals import MIGRATION as RULE
from tests.migrations._driver import noop, run


def test_overrides_are_marked_at_the_def():
    out, findings = run(RULE, """\
        from trl import DPOTrainer, RewardTrainer

        class Margin(RewardTrainer):
            def compute_loss(self, model, inputs, return_outputs=False):
                return model(inputs["input_ids_chosen"])

        class MyDPO(DPOTrainer):
            def concatenated_forward(self, model, batch):
                return super().concatenated_forward(model, batch)

            def helper(self):
                return 1
    """)
    lines = out.splitlines()
    assert lines[3].strip().startswith("# TODO(trl-compat): RewardTrainer.compute_loss gets")
    assert any(f.message.startswith("RewardTrainer.compute_loss gets num_items_in_batch=") for f in findings)
    assert lines[4].strip().startswith("def compute_loss")
    assert any("overrides DPOTrainer.concatenated_forward" in f.message for f in findings) and len(findings) == 2


def test_noops():
    noop(RULE, """\
        from transformers import Trainer
        from trl import SFTTrainer

        class Mine(Trainer):
            def compute_loss(self, model, inputs, return_outputs=False):
                return 0

        class Fine(SFTTrainer):
            def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
                return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)

        def compute_loss(model, inputs):
            return 0
    """)
