"""TRL 1.13 removed the module `trl.extras.dataset_formatting`.

In 1.9 - 1.12 it held only `FORMAT_MAPPING` (the `datasets` features of a ChatML and an instruction dataset); the
formatting functions of older releases (`get_formatting_func_from_dataset`, `conversations_formatting_function`,
`instructions_formatting_function`) were already gone because `SFTTrainer` formats conversational and
prompt-completion datasets itself. No TRL successor exists, so every import and use gets a TODO whose text is the
exact replacement.
"""

from __future__ import annotations

from migrations.kinds.symbols import Gone, SymbolMigration

_MOD = "trl.extras.dataset_formatting"
_FUNCS = "SFTTrainer formats conversational and prompt/completion datasets itself: drop the formatting function"


class DatasetFormatting(SymbolMigration):
    fix_safety = "safe"
    summary = "trl.extras.dataset_formatting (removed in 1.13) -> TODO with the replacement"
    triggers = ("dataset_formatting",)
    removed_modules = {_MOD: f"{_MOD} was removed in TRL 1.13 with no successor"}
    symbols = {
        f"{_MOD}.FORMAT_MAPPING": Gone(
            f"{_MOD}.FORMAT_MAPPING was removed in TRL 1.13; define it in your code: "
            '{"chatml": datasets.List({"content": Value("string"), "role": Value("string")}), '
            '"instruction": {"completion": Value("string"), "prompt": Value("string")}}'
        ),
        **{f"{_MOD}.{n}": Gone(f"{_MOD}.{n} no longer exists; {_FUNCS}") for n in (
            "get_formatting_func_from_dataset", "conversations_formatting_function",
            "instructions_formatting_function",
        )},
    }


MIGRATION = DatasetFormatting()
