"""neftune-hook: `from transformers.trainer_utils import neftune_post_forward_hook`, gone in transformers 5.2.

`transformers.trainer_utils.neftune_post_forward_hook` (4.35 - 5.1, the atlas) moved to `transformers.integrations`
in 5.2, a module that has no such name on 4.56.2 - 5.1: no import path serves every transformers a migrated manifest
allows (TRL 1.13 - 1.16 take 4.56.2 .. 5.24). The function is the one TRL 0.7.3 - 0.11 copied into
`trl.trainer.utils` (the same body: add uniform noise of magnitude `neftune_noise_alpha / sqrt(seq_len * dim)` to
the embeddings in training mode), which `compat.trl` keeps (tested against TRL's wheels and transformers 4.56.2's):
the import goes there. MRPO's LLaMA-Factory DPO trainer imports it for its NEFTune embedding hook.
"""

from __future__ import annotations

from migrations.kinds.symbols import Moved, SymbolMigration

OLD = "transformers.trainer_utils.neftune_post_forward_hook"


class NeftuneHook(SymbolMigration):
    summary = "transformers.trainer_utils.neftune_post_forward_hook (moved in transformers 5.2) -> compat.trl"
    triggers = ("neftune_post_forward_hook",)
    requires = ("transformers",)
    symbols = {OLD: Moved("compat.trl", "neftune_post_forward_hook",
                          "transformers 5.2 moved it to transformers.integrations, which 4.56 - 5.1 lack: trl-compat "
                          "keeps the same function")}


MIGRATION = NeftuneHook()
