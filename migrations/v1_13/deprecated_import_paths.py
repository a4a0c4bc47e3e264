"""Deprecated import paths of promoted trainers: `trl.experimental.distillation` and `trl.experimental.kto` -> `trl`.

`DistillationConfig`/`DistillationTrainer` became stable in TRL 1.10 and `KTOConfig`/`KTOTrainer` before 1.9; the
experimental paths are subclasses that emit a `FutureWarning` ("removed in v2.0.0") on every line up to 1.16 (verified
in the 1.13 and 1.16 wheels). The stable classes are the same objects' bases with identical signatures, so the imports
move to `trl` with no other change.
"""

from __future__ import annotations

from migrations.v1_14._symbols import Moved, SymbolMigration

_NAMES = {
    "trl.experimental.distillation": ("DistillationConfig", "DistillationTrainer"),
    "trl.experimental.kto": ("KTOConfig", "KTOTrainer"),
}


class DeprecatedImportPaths(SymbolMigration):
    id = "deprecated-import-paths"
    release = "1.13"
    summary = "trl.experimental.distillation / trl.experimental.kto (deprecated aliases) -> trl"
    anchor = "deprecated-import-paths"
    triggers = ("distillation", "kto")
    symbols = {f"{mod}.{name}": Moved("trl", name, "promoted to the stable API; the experimental alias warns")
               for mod, names in _NAMES.items() for name in names}
    # TRL 1.9 kept the implementation in submodules that 1.10 deleted
    symbols.update({
        "trl.experimental.distillation.distillation_config.DistillationConfig": Moved("trl", "DistillationConfig"),
        "trl.experimental.distillation.distillation_trainer.DistillationTrainer": Moved("trl", "DistillationTrainer"),
    })


MIGRATION = DeprecatedImportPaths()
