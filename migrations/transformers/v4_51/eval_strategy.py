"""`TrainingArguments(evaluation_strategy=)` is gone (renamed `eval_strategy` in 4.41; the atlas finds the old
field in 4.50.3 and not in 4.51.3).

`eval_strategy` is a field on 4.41 .. 5.x, with the same values: the rename is exact. Applied to
`TrainingArguments`, `Seq2SeqTrainingArguments` and every TRL config (`trl.<X>Config` subclasses
`TrainingArguments`).
"""

from __future__ import annotations

from migrations.kinds.options import OptionChange, OptionMigration

TRAINING_ARGUMENTS = frozenset({
    "transformers.TrainingArguments", "transformers.training_args.TrainingArguments",
    "transformers.Seq2SeqTrainingArguments", "transformers.training_args_seq2seq.Seq2SeqTrainingArguments",
})
TRL_CONFIGS = {"callee_prefixes": ("trl.",), "callee_suffixes": ("Config",)}


class EvalStrategy(OptionMigration):
    summary = "TrainingArguments / TRL configs: evaluation_strategy= -> eval_strategy= (gone by transformers 4.51)"
    triggers = ("evaluation_strategy",)
    requires = ("transformers", "trl")
    changes = (
        OptionChange(TRAINING_ARGUMENTS, "evaluation_strategy", "rename-key", new_key="eval_strategy",
                     message="renamed in transformers 4.41, the old name gone by 4.51", **TRL_CONFIGS),
    )


MIGRATION = EvalStrategy()
