"""removed-sft-data-helpers: `DataCollatorForCompletionOnlyLM` and `ConstantLengthDataset` (gone in TRL 0.20).

Both were removed in 0.20 (read from the 0.19.1 and 0.20.0 wheels), replaced by `SFTConfig` options:
* `DataCollatorForCompletionOnlyLM(response_template, ...)` computed the loss on the tokens after the response
  template only. `SFTConfig(completion_only_loss=True)` (the default for prompt/completion datasets) and
  `assistant_only_loss=True` (conversational datasets, template with generation markers) do that from the dataset's
  structure, not from a template string. Equivalence depends on the dataset's shape, which a static rule cannot see,
  so every use is marked with what to do;
* `ConstantLengthDataset(tokenizer, dataset, seq_length=...)` packed texts into fixed-length blocks:
  `SFTConfig(packing=True, max_length=seq_length)` on the raw dataset is the successor (marked: its packing
  strategy differs, the blocks are not byte-identical).
"""

from __future__ import annotations

from migrations.kinds.symbols import Gone, SymbolMigration

_COLLATOR = ("DataCollatorForCompletionOnlyLM was removed in TRL 0.20: use a prompt/completion dataset "
             "(SFTConfig completion_only_loss) or assistant_only_loss=True, drop data_collator")
_CLD = "ConstantLengthDataset was removed in TRL 0.20: pass the raw dataset with SFTConfig(packing=True)"


class RemovedSftDataHelpers(SymbolMigration):
    summary = "DataCollatorForCompletionOnlyLM / ConstantLengthDataset (removed in 0.20) -> marked with their successors"
    triggers = ("DataCollatorForCompletionOnlyLM", "ConstantLengthDataset")
    symbols = {
        **{p: Gone(_COLLATOR) for p in ("trl.DataCollatorForCompletionOnlyLM",
                                        "trl.trainer.DataCollatorForCompletionOnlyLM",
                                        "trl.trainer.utils.DataCollatorForCompletionOnlyLM")},
        **{p: Gone(_CLD) for p in ("trl.trainer.ConstantLengthDataset", "trl.trainer.utils.ConstantLengthDataset",
                                   "trl.ConstantLengthDataset")},
    }


MIGRATION = RemovedSftDataHelpers()
