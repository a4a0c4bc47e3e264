"""removed-dataset-formatting: `trl.extras.dataset_formatting` (gone in TRL 1.13) -> `compat.trl`.

TRL removed the module in two steps (read from the wheels): the formatting functions
(`conversations_formatting_function`, `instructions_formatting_function`, `get_formatting_func_from_dataset`,
deprecated in 0.24) in 0.27, the module itself, then holding only `FORMAT_MAPPING` (the `datasets` features of a
ChatML and an instruction dataset), in 1.13. `compat.trl` keeps copies with the same signatures and behaviour
(`compat/_dataset_formatting.py`: the 0.26.2 functions without their deprecation warning, 1.12.0's `FORMAT_MAPPING`),
so the imports move there on every target 1.13 - 1.16 and the project's manifests gain `trl-compat`. TRL's own
successor (`SFTTrainer` formats conversational and prompt/completion datasets itself; `tokenizer.apply_chat_template`
for other uses) is explained in MIGRATION.md. Any other name imported from the module is marked.
"""

from __future__ import annotations

from migrations.kinds.symbols import Moved, SymbolMigration

_MOD = "trl.extras.dataset_formatting"
_NAMES = ("FORMAT_MAPPING", "conversations_formatting_function", "instructions_formatting_function",
          "get_formatting_func_from_dataset")
_NOTE = "removed from TRL (functions in 0.27, the module in 1.13); trl-compat keeps copies (the project now needs " \
        "trl-compat)"


class DatasetFormatting(SymbolMigration):
    fix_safety = "safe"
    summary = "trl.extras.dataset_formatting (functions removed in 0.27, module in 1.13) -> compat.trl copies"
    triggers = ("dataset_formatting",)
    removed_modules = {_MOD: f"{_MOD} was removed in TRL 1.13: import its names from compat.trl"}
    symbols = {f"{_MOD}.{n}": Moved("compat.trl", n, _NOTE) for n in _NAMES}


MIGRATION = DatasetFormatting()
