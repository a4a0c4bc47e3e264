"""transformers 5.15 removed `TrainingArguments(logging_dir=)` (deprecated in 5.0): TensorBoard's folder comes from
the environment variable `TENSORBOARD_LOGGING_DIR` (read by `TensorBoardCallback` in 5.x; default
`<output_dir>/runs/<timestamp>`).

No spelling works on both 4.56.2 (which ignores the variable) and 5.15+, so it is marked for a target at or above
5.15: set `TENSORBOARD_LOGGING_DIR` before training (or drop the argument to log under `output_dir`). The other field
5.15 removed, `warmup_ratio=`, has a rule of its own (`warmup-ratio`), which rewrites it.
"""

from __future__ import annotations

from migrations.kinds.options import OptionChange, OptionMigration

TRAINING_ARGUMENTS = frozenset({
    "transformers.TrainingArguments", "transformers.training_args.TrainingArguments",
    "transformers.Seq2SeqTrainingArguments", "transformers.training_args_seq2seq.Seq2SeqTrainingArguments",
})
_TRL = {"callee_prefixes": ("trl.",), "callee_suffixes": ("Config",)}


class LoggingDir(OptionMigration):
    summary = "TrainingArguments(logging_dir=) removed in transformers 5.15 -> TODO"
    triggers = ("logging_dir",)
    requires = ("transformers", "trl")
    changes = (
        OptionChange(TRAINING_ARGUMENTS, "logging_dir", "todo", message=(
            "logging_dir= was removed in transformers 5.15: set the environment variable TENSORBOARD_LOGGING_DIR "
            "to this folder before training, and drop the argument"), **_TRL),
    )


MIGRATION = LoggingDir()
