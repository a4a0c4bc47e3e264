"""transformers 4.50 removed its own `AdamW` (atlas: `transformers.AdamW` and `transformers.optimization.AdamW` last
in 4.49.0; read in the 4.49.0 and 4.50.0 wheels).

Its update is not `torch.optim.AdamW`'s (epsilon added before the bias correction scales the step, weight decay applied
to the updated weights, defaults `eps=1e-6`, `weight_decay=0.0`, `correct_bias=`), so switching to torch's optimizer
would change training silently. Imports and uses point at `compat.trl.AdamW` instead: the 4.49.0 update, written out
in `compat/_optim.py` and held against a float64 formula of it in the tests. A module that binds `AdamW` itself, or
imports it from torch, is not touched (the table matches transformers' qualified names only).
"""

from __future__ import annotations

from migrations.kinds.symbols import Moved, SymbolMigration

_PATHS = ("transformers.AdamW", "transformers.optimization.AdamW")


class RemovedAdamW(SymbolMigration):
    summary = "transformers.AdamW (removed in 4.50) -> compat.trl.AdamW (its 4.49 update; not torch.optim.AdamW's)"
    triggers = ("AdamW",)
    requires = ("transformers",)
    symbols = {q: Moved("compat.trl", "AdamW", "transformers 4.49's AdamW update, kept in trl-compat") for q in _PATHS}


MIGRATION = RemovedAdamW()
