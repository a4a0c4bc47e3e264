"""transformers 5.0 removed `Trainer(tokenizer=)` (renamed `processing_class=` in 4.46, accepted as an alias
until 4.57 through `@deprecate_kwarg`, atlas: `Trainer.__init__` renamed ("tokenizer", "processing_class")).

`processing_class=` is a parameter on 4.56.2 and every 5.x: the rename is exact. Applied to `transformers.Trainer`
and `Seq2SeqTrainer` calls (TRL's trainers have their own rules); a subclass's `super().__init__(tokenizer=...)`
is left alone (the callee is not resolved).
"""

from __future__ import annotations

from migrations.kinds.options import OptionChange, OptionMigration

TRAINERS = frozenset({
    "transformers.Trainer", "transformers.trainer.Trainer",
    "transformers.Seq2SeqTrainer", "transformers.trainer_seq2seq.Seq2SeqTrainer",
})


class TrainerProcessingClass(OptionMigration):
    summary = "transformers.Trainer(tokenizer=) -> processing_class= (removed in 5.0)"
    triggers = ("tokenizer",)
    requires = ("transformers",)
    changes = (
        OptionChange(TRAINERS, "tokenizer", "rename-key", new_key="processing_class",
                     message="transformers 5.0 removed the tokenizer= alias; processing_class= works since 4.46"),
    )


MIGRATION = TrainerProcessingClass()
