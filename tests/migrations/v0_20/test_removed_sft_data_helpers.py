"""Before/after and no-op cases for `removed-sft-data-helpers` (imports move to `compat.trl`'s 0.19.1 copies)."""

from __future__ import annotations

import pytest

from migrations.v0_20.removed_sft_data_helpers import MIGRATION as RULE
from tests.migrations._driver import check, noop, run


@pytest.mark.parametrize("target", ["1.13.0", "1.14.0", "1.15.0", "1.16.0"])
def test_collator_and_dataset_move_to_compat_on_every_target(target):
    findings = check(RULE, """\
        from trl import SFTTrainer, DataCollatorForCompletionOnlyLM
        from trl.trainer import ConstantLengthDataset

        collator = DataCollatorForCompletionOnlyLM("### Answer:", tokenizer=tok)
        ds = ConstantLengthDataset(tok, raw, seq_length=512)
        SFTTrainer(model, train_dataset=ds, data_collator=collator)
    """, """\
        from trl import SFTTrainer
        from compat.trl import DataCollatorForCompletionOnlyLM
        from compat.trl import ConstantLengthDataset

        collator = DataCollatorForCompletionOnlyLM("### Answer:", tokenizer=tok)
        ds = ConstantLengthDataset(tok, raw, seq_length=512)
        SFTTrainer(model, train_dataset=ds, data_collator=collator)
    """, target=target)
    assert findings and all(f.changed for f in findings)
    assert RULE.fix_safety == "safe"


def test_module_paths_and_aliases():
    check(RULE, """\
        import trl
        from trl.trainer.utils import DataCollatorForCompletionOnlyLM as Collator

        c = Collator(response_template=ids, instruction_template="### Human:", tokenizer=tok, mlm=False)
        d = trl.trainer.ConstantLengthDataset(tok, raw, formatting_func=fmt, infinite=True)
    """, """\
        import trl
        from compat.trl import DataCollatorForCompletionOnlyLM as Collator
        import compat.trl

        c = Collator(response_template=ids, instruction_template="### Human:", tokenizer=tok, mlm=False)
        d = compat.trl.ConstantLengthDataset(tok, raw, formatting_func=fmt, infinite=True)
    """)


def test_second_positional_template_moves():
    out, _ = run(RULE, """\
        from trl import DataCollatorForCompletionOnlyLM
        a = DataCollatorForCompletionOnlyLM(response_template_ids, instruction_template_ids, tokenizer=tok)
        b = DataCollatorForCompletionOnlyLM("### Assistant:", "### Human:", tokenizer=tok)
    """)
    assert "from compat.trl import DataCollatorForCompletionOnlyLM" in out and "TODO" not in out


def test_second_positional_tokenizer_is_marked_in_the_whole_file():
    out, findings = run(RULE, """\
        from trl import DataCollatorForCompletionOnlyLM
        a = DataCollatorForCompletionOnlyLM("### Answer:", tokenizer=tok)
        b = DataCollatorForCompletionOnlyLM("### Answer:", tokenizer)
    """)
    lines = out.splitlines()
    assert lines[1] == "from trl import DataCollatorForCompletionOnlyLM"  # never half migrated
    assert lines[0].startswith("# TODO(trl-compat): DataCollatorForCompletionOnlyLM(x, tokenizer) [removed-sft")
    assert any("pass tokenizer=" in f.message for f in findings)
    assert sum(ln.startswith("# TODO(trl-compat):") for ln in lines) == 3
    assert findings and not any(f.changed for f in findings)


def test_noops():
    noop(RULE, """\
        from transformers import DataCollatorForLanguageModeling
        from mylib import ConstantLengthDataset
        from trl import SFTTrainer

        class DataCollatorForCompletionOnlyLM:
            pass

        DataCollatorForCompletionOnlyLM()
        ConstantLengthDataset()
        text = "trl.DataCollatorForCompletionOnlyLM"
    """)
    noop(RULE, """\
        from .utils import DataCollatorForCompletionOnlyLM
        DataCollatorForCompletionOnlyLM("### Answer:", tokenizer)
    """)
