"""Before/after and no-op cases for `removed-sft-data-helpers`."""

from __future__ import annotations

from migrations.v0_20.removed_sft_data_helpers import MIGRATION as RULE
from tests.migrations._driver import noop, run


def test_collator_and_dataset_are_marked_at_each_use():
    out, findings = run(RULE, """\
        from trl import SFTTrainer, DataCollatorForCompletionOnlyLM
        from trl.trainer import ConstantLengthDataset

        collator = DataCollatorForCompletionOnlyLM("### Answer:", tokenizer=tok)
        ds = ConstantLengthDataset(tok, raw, seq_length=512)
        SFTTrainer(model, train_dataset=ds, data_collator=collator)
    """)
    lines = out.splitlines()
    assert lines[0].startswith("# TODO(trl-compat): DataCollatorForCompletionOnlyLM was removed")
    assert sum("# TODO(trl-compat): ConstantLengthDataset was removed" in ln for ln in lines) == 2
    assert sum("ConstantLengthDataset was removed in TRL 0.20" in f.message for f in findings) == 2
    assert 'collator = DataCollatorForCompletionOnlyLM("### Answer:", tokenizer=tok)' in lines
    assert all(f.severity == "manual" for f in findings) and len(findings) == 4


def test_noops():
    noop(RULE, """\
        from transformers import DataCollatorForLanguageModeling
        from mylib import ConstantLengthDataset

        class DataCollatorForCompletionOnlyLM:
            pass

        DataCollatorForCompletionOnlyLM()
        ConstantLengthDataset()
        text = "trl.DataCollatorForCompletionOnlyLM"
    """)
