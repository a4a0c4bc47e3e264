"""removed-ddpo-alignprop-iterative-sft: DDPO, AlignProp (diffusion) and IterativeSFT (gone in TRL 0.24), marked.

TRL 0.24 removed `DDPOTrainer`/`DDPOConfig`/`DDPOStableDiffusionPipeline`/`DefaultDDPOStableDiffusionPipeline`,
`AlignPropTrainer`/`AlignPropConfig` and `IterativeSFTTrainer`/`IterativeSFTConfig` (read from the 0.23.1 and 0.24.0
wheels; no `trl.experimental` home either). Neither `compat.trl` nor `reference_impl` implements them, so every import
and use is marked: keep TRL 0.23 for this code (a separate environment), or rewrite it.
"""

from __future__ import annotations

from migrations.kinds.symbols import Gone, SymbolMigration

_DIFFUSION = "removed in TRL 0.24 with no successor: keep trl<0.24 for this diffusion code"
_ITERATIVE = "IterativeSFTTrainer was removed in TRL 0.24: call SFTTrainer per round, or keep trl<0.24"
_NAMES = {
    "DDPOTrainer": ("ddpo_trainer", _DIFFUSION), "DDPOConfig": ("ddpo_config", _DIFFUSION),
    "AlignPropTrainer": ("alignprop_trainer", _DIFFUSION), "AlignPropConfig": ("alignprop_config", _DIFFUSION),
    "IterativeSFTTrainer": ("iterative_sft_trainer", _ITERATIVE),
    "IterativeSFTConfig": ("iterative_sft_config", _ITERATIVE),
}
_PIPELINES = ("DDPOStableDiffusionPipeline", "DefaultDDPOStableDiffusionPipeline")


def _table() -> dict[str, Gone]:
    out: dict[str, Gone] = {}
    for name, (stem, msg) in _NAMES.items():
        for p in (f"trl.{name}", f"trl.trainer.{name}", f"trl.trainer.{stem}.{name}"):
            out[p] = Gone(f"{name} " + msg if msg is _DIFFUSION else msg)
    for name in _PIPELINES:
        for p in (f"trl.{name}", f"trl.models.{name}", f"trl.models.modeling_sd_base.{name}"):
            out[p] = Gone(f"{name} " + _DIFFUSION)
    return out


class RemovedDdpoAlignpropIterativeSft(SymbolMigration):
    summary = "DDPO / AlignProp / IterativeSFT trainers (removed in 0.24, no successor) -> marked"
    triggers = ("DDPO", "AlignProp", "IterativeSFT")
    symbols = _table()


MIGRATION = RemovedDdpoAlignpropIterativeSft()
