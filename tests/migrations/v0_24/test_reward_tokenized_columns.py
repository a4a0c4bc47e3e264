"""Before/after and no-op cases for `reward-tokenized-columns` (the shape of a TRL 0.8 reward script and subclass)."""

from __future__ import annotations

from migrations.v0_24.reward_tokenized_columns import MIGRATION as RULE
from tests.migrations._driver import noop, run


def test_tokenizing_function_trainer_call_and_compute_loss_are_marked():
    out, findings = run(RULE, """\
        from trl import RewardConfig, RewardTrainer


        def tokenize_pair(examples):
            out = {"input_ids_chosen": [], "attention_mask_chosen": [], "input_ids_rejected": []}
            for c in examples["chosen"]:
                out["input_ids_chosen"].append(tok(c)["input_ids"])
            return out


        class MarginRewardTrainer(RewardTrainer):
            def compute_loss(self, model, inputs, return_outputs=False):
                rewards_chosen = model(input_ids=inputs["input_ids_chosen"])["logits"]
                return rewards_chosen.mean()


        train_dataset = raw.map(tokenize_pair, batched=True)
        trainer = MarginRewardTrainer(model=model, args=RewardConfig(output_dir="o"), train_dataset=train_dataset)
    """)
    lines = out.splitlines()
    marks = [i for i, ln in enumerate(lines) if ln.lstrip().startswith("# TODO(trl-compat):")]
    # one per function that names a column (not one per use), and the trainer construction
    assert [lines[i + 1].strip() for i in marks] == [
        'out = {"input_ids_chosen": [], "attention_mask_chosen": [], "input_ids_rejected": []}',
        'rewards_chosen = model(input_ids=inputs["input_ids_chosen"])["logits"]',
        'trainer = MarginRewardTrainer(model=model, args=RewardConfig(output_dir="o"), train_dataset=train_dataset)',
    ]
    assert all(len(lines[i]) <= 100 and lines[i].endswith("[reward-tokenized-columns]") for i in marks)
    assert len(findings) == 3 and all(f.severity == "manual" for f in findings)
    assert "chosen_ids/rejected_ids" in findings[0].message


def test_noops():
    # the new column names, a docstring mentioning the old ones, a file without TRL
    noop(RULE, """\
        from trl import RewardTrainer

        def tokenize(ex):
            \"\"\"Builds chosen_ids, not input_ids_chosen as TRL 0.8 did.\"\"\"
            return {"chosen_ids": tok(ex["chosen"])["input_ids"]}

        RewardTrainer(model=m, train_dataset=ds)
    """)
    noop(RULE, """\
        import torch

        batch = {"input_ids_chosen": torch.ones(2, 3)}
        MyTrainer(model=m, train_dataset=batch)
    """)
