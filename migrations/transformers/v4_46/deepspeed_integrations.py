"""transformers 4.46 removed the module `transformers.deepspeed` (a shim since 4.33): its names live in
`transformers.integrations` (and `transformers.integrations.deepspeed`), on every release from 4.33 to 5.x.

Every import form counts, including the module imported by name from the package among other names
(`from transformers import GPTQConfig, deepspeed`, then `deepspeed.is_deepspeed_zero3_enabled()`).

Mechanical: the table (`_deepspeed_moves`, generated from the atlas) maps every public name the shim exported to the
module that exports it on both 4.56.2 and the newest release. Same objects, so the rewrite is exact.
"""

from __future__ import annotations

from migrations.kinds.symbols import Moved, SymbolMigration
from migrations.transformers.v4_46._deepspeed_moves import MOVES

_MOD = "transformers.deepspeed"


class DeepspeedIntegrations(SymbolMigration):
    summary = "transformers.deepspeed (removed in 4.46) -> transformers.integrations"
    # `from transformers import GPTQConfig, deepspeed` (the module imported by name among others, TideDra/VL-RLHF)
    # holds neither `transformers.deepspeed` nor `transformers import deepspeed`: the trigger is the word, the
    # pattern keeps the files that only use the `deepspeed` package itself out of the parse
    triggers = ("deepspeed",)
    requires = ("transformers",)
    pattern = r"transformers\.deepspeed\b|from\s+transformers\s+import\s+\(?[\w\s,]*\bdeepspeed\b"
    removed_modules = {_MOD: "transformers.deepspeed was removed in transformers 4.46: import from "
                             "transformers.integrations"}
    symbols = {f"{_MOD}.{name}": Moved(module, name) for name, module in MOVES.items()}


MIGRATION = DeepspeedIntegrations()
