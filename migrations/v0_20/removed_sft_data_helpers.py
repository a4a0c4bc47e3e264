"""removed-sft-data-helpers: `DataCollatorForCompletionOnlyLM`, `ConstantLengthDataset` (gone in TRL 0.20) -> `compat.trl`.

Both were removed in 0.20 (read from the 0.19.1 and 0.20.0 wheels). `compat.trl` keeps copies of the 0.19.1 classes,
same constructor signatures and behaviour (`compat/_sft_data.py`; tested against hand-written masks and blocks and
with TRL 1.16's `SFTTrainer`), so the imports move there on every target 1.13 - 1.16 and the project's manifests gain
`trl-compat`. TRL's own successors (`SFTConfig(completion_only_loss=True)` / `assistant_only_loss=True` from a
prompt/completion or conversational dataset, `SFTConfig(packing=True)` on the raw dataset) are explained in
MIGRATION.md: they key on the dataset's structure, not on a template string, and pack differently, so switching to
them is the user's decision.

One use stays marked: a collator called with a second positional argument that is not a template. Since TRL 0.5 the
second parameter is `instruction_template`; TRL 0.4 passed everything after `response_template` to transformers'
collator, so `DataCollatorForCompletionOnlyLM("### Answer:", tokenizer)` meant the tokenizer there.
"""

from __future__ import annotations

import libcst as cst

from migrations.kinds.cst import dotted
from migrations.kinds.symbols import Moved, SymbolMigration

_COLLATOR = "DataCollatorForCompletionOnlyLM"
_CLD = "ConstantLengthDataset"
_NOTE = "removed from TRL in 0.20; trl-compat keeps the 0.19.1 class (the project now needs trl-compat)"
_COLLATOR_PATHS = (f"trl.{_COLLATOR}", f"trl.trainer.{_COLLATOR}", f"trl.trainer.utils.{_COLLATOR}")
_CLD_PATHS = (f"trl.{_CLD}", f"trl.trainer.{_CLD}", f"trl.trainer.utils.{_CLD}")


def _looks_like_template(arg: cst.BaseExpression) -> bool:
    """A value that can be an instruction template: a string, a list of ids, None, or a name saying so."""
    if isinstance(arg, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.List)):
        return True
    if isinstance(arg, cst.Name) and arg.value == "None":
        return True
    name = (dotted(arg) or "").rsplit(".", 1)[-1].lower()
    return any(word in name for word in ("template", "instruction", "human", "user", "prompt"))


class RemovedSftDataHelpers(SymbolMigration):
    summary = "DataCollatorForCompletionOnlyLM / ConstantLengthDataset (removed in 0.20) -> compat.trl (0.19.1 copies)"
    triggers = (_COLLATOR, _CLD)
    fix_safety = "safe"
    symbols = {
        **{p: Moved("compat.trl", _COLLATOR, _NOTE) for p in _COLLATOR_PATHS},
        **{p: Moved("compat.trl", _CLD, _NOTE) for p in _CLD_PATHS},
    }
    conditional = frozenset(_COLLATOR_PATHS)

    def convertible(self, qname: str, call: cst.Call | None) -> str | None:
        if call is None:
            return None
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if len(positional) >= 2 and not _looks_like_template(positional[1].value):
            return (f"{_COLLATOR}(x, tokenizer): pass tokenizer= by keyword (since TRL 0.5 the 2nd positional is "
                    "instruction_template); then the import moves to compat.trl")
        return None


MIGRATION = RemovedSftDataHelpers()
