"""removed-trainer-utils: helpers TRL 0.29 dropped from `trl.trainer.utils` / `trl`.

Read from the 0.28.0 and 0.29.0 wheels:
* `cap_exp`, `get_exp_cap` (small tensor helpers) -> `compat.trl` copies of the 0.28 bodies;
* `RunningMoments` (a running mean/std over an Accelerator), `FDivergenceConstants`, `FDivergenceType` (DPO's
  f-divergence enum; `DPOConfig.f_divergence_type` now takes the plain strings) -> marked.
"""

from __future__ import annotations

from migrations.kinds.symbols import Gone, Moved, SymbolMigration

_NOTE = "removed from TRL in 0.29; trl-compat keeps the 0.28 function (the project now needs trl-compat)"
_MOMENTS = "RunningMoments was removed in TRL 0.29: copy it from TRL 0.28 (trl/trainer/utils.py)"
_FDIV = "removed in TRL 0.29: pass the f-divergence as a string, e.g. f_divergence_type=\"reverse_kl\""


def _table() -> dict[str, Moved | Gone]:
    out: dict[str, Moved | Gone] = {}
    for name in ("cap_exp", "get_exp_cap"):
        out[f"trl.trainer.utils.{name}"] = Moved("compat.trl", name, _NOTE)
    for p in ("trl.trainer.utils.RunningMoments", "trl.trainer.RunningMoments"):
        out[p] = Gone(_MOMENTS)
    for name in ("FDivergenceConstants", "FDivergenceType"):
        for p in (f"trl.{name}", f"trl.trainer.{name}", f"trl.trainer.dpo_config.{name}"):
            out[p] = Gone(f"{name} " + _FDIV)
    return out


class RemovedTrainerUtils(SymbolMigration):
    summary = "cap_exp/get_exp_cap (removed in 0.29) -> compat.trl; RunningMoments, FDivergence* -> marked"
    triggers = ("cap_exp", "get_exp_cap", "RunningMoments", "FDivergence")
    symbols = _table()


MIGRATION = RemovedTrainerUtils()
