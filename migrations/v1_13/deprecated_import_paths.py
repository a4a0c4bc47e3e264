"""Deprecated import paths that still work and warn on every line up to 1.16 (verified in the 1.9, 1.13, 1.16 wheels).

* `DistillationConfig`/`DistillationTrainer` became stable in TRL 1.10 and `KTOConfig`/`KTOTrainer` before 1.9; the
  `trl.experimental.distillation` / `trl.experimental.kto` paths are subclasses that emit a `FutureWarning`
  ("removed in v2.0.0"). The stable classes are their bases with identical signatures: the imports move to `trl`.
* `trl.create_reference_model` (also `trl.models`, `trl.models.utils`) is a wrapper that warns "now located in
  `trl.experimental.utils`" on every call, but it works on every target, so it is left as it is (issue 12: a name the
  target still exports is never rewritten, and code is pointed at `compat` only where the target lacks a name).
"""

from __future__ import annotations

from migrations.kinds.symbols import Moved, SymbolMigration

_NAMES = {
    "trl.experimental.distillation": ("DistillationConfig", "DistillationTrainer"),
    "trl.experimental.kto": ("KTOConfig", "KTOTrainer"),
}


class DeprecatedImportPaths(SymbolMigration):
    fix_safety = "safe"
    summary = "trl.experimental.distillation / trl.experimental.kto (deprecated aliases) -> trl"
    triggers = ("distillation", "kto")
    symbols = {f"{mod}.{name}": Moved("trl", name, "promoted to the stable API; the experimental alias warns")
               for mod, names in _NAMES.items() for name in names}
    # TRL 1.9 kept the implementation in submodules that 1.10 deleted
    symbols.update({
        "trl.experimental.distillation.distillation_config.DistillationConfig": Moved("trl", "DistillationConfig"),
        "trl.experimental.distillation.distillation_trainer.DistillationTrainer": Moved("trl", "DistillationTrainer"),
    })


MIGRATION = DeprecatedImportPaths()
