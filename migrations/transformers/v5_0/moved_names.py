"""transformers 5.0 reorganised modules that training code imports from by path: `transformers.tokenization_utils`
and `tokenization_utils_fast` are gone (the tokenizers are `tokenization_python` / `tokenization_utils_tokenizers`
now), the per-family `tokenization_*_fast` modules went with their classes, helpers left `trainer.py` for
`trainer_pt_utils` / `trainer_utils`, and so on.

Mechanical: the table (`_moved_names`, generated from the atlas by `python -m migrations.atlas.stack_tables`) maps
each class or function the newest release no longer has at its 4.x path to a module that exports it on both 4.56.2
and the newest release, where on 4.56.2 both paths resolve to the same definition (so the new import works on every
release the manifest allows); the top level `transformers` is preferred. A name with no such shared path
(`modeling_utils.load_sharded_checkpoint`, in `trainer_utils` from 5.0 only) goes to `compat.trl` (`BRIDGED`), which
imports it from wherever the installed transformers keeps it.
"""

from __future__ import annotations

from migrations.kinds.symbols import Moved, SymbolMigration
from migrations.transformers.v5_0._moved_names import MOVES


#: Names 5.0 moved where no path exports them on both 4.56.2 and 5.x: `compat.trl` resolves each to whichever the
#: installed transformers has (`compat/_exports.py`, where the two definitions are compared)
BRIDGED = {"transformers.modeling_utils.load_sharded_checkpoint": "compat.trl"}
#: Re-exports dropped from a module the atlas reads in full, of a name defined in one it reads for existence only (so
#: the generator cannot prove the two the same): checked against the wheels by the tests. LLaVA's `llava_trainer.py`
#: and its many copies import `ALL_LAYERNORM_LAYERS` from `transformers.trainer`, which stopped importing it in 4.53;
#: `transformers.pytorch_utils` defines it (`[nn.LayerNorm]`) in 4.30 - 5.24.
DEFINED_ELSEWHERE = {"transformers.trainer.ALL_LAYERNORM_LAYERS": "transformers.pytorch_utils"}


class MovedNames(SymbolMigration):
    summary = "names transformers 5.0 moved (tokenization_utils, trainer helpers, ...) -> a path 4.56 and 5.x share"
    triggers = tuple(sorted({q.rsplit(".", 2)[-2] for q in {**MOVES, **BRIDGED, **DEFINED_ELSEWHERE}}))
    requires = ("transformers",)
    symbols = {qual: Moved(module, qual.rsplit(".", 1)[-1])
               for qual, module in {**MOVES, **BRIDGED, **DEFINED_ELSEWHERE}.items()}


MIGRATION = MovedNames()
