"""removed-ddpo-alignprop-iterative-sft: DDPO / AlignProp -> `compat.trl` (the reference); IterativeSFT marked.

TRL 0.24 removed the diffusion trainers - `DDPOTrainer`/`DDPOConfig`, `AlignPropTrainer`/`AlignPropConfig`, the
pipelines `DDPOStableDiffusionPipeline`/`DefaultDDPOStableDiffusionPipeline`, `trl.models.auxiliary_modules`
(`aesthetic_scorer`, `AestheticScorer`) and `trl.trainer.utils.PerPromptStatTracker` - and
`IterativeSFTTrainer`/`IterativeSFTConfig` (read from the 0.23.1 and 0.24.0 wheels; no `trl.experimental` home either).

* The diffusion names move to `compat.trl`: TRL's own while the installed TRL has them (<= 0.23), else
  `reference_impl.diffusion`, a re-implementation with TRL 0.23.1's constructors and config fields (built on
  diffusers; the project gains a `diffusers` requirement, see `compat._exports.NEEDS`). Same objective, same flags.
* IterativeSFT is marked: its successor is a loop over `SFTTrainer` that only the author can write.
"""

from __future__ import annotations

from migrations.kinds.symbols import Gone, Moved, SymbolMigration

_ITERATIVE = "IterativeSFTTrainer was removed in TRL 0.24: call SFTTrainer per round, or keep trl<0.24"
_ITERATIVE_NAMES = {"IterativeSFTTrainer": "iterative_sft_trainer", "IterativeSFTConfig": "iterative_sft_config"}
_NOTE = "removed from TRL in 0.24; compat.trl resolves to trl-compat's reference (reference_impl.diffusion)"

#: name -> the TRL 0.23 modules that bound it (besides the top level where `_TOP` says so)
_DIFFUSION: dict[str, tuple[str, ...]] = {
    "DDPOTrainer": ("trl.trainer", "trl.trainer.ddpo_trainer"),
    "DDPOConfig": ("trl.trainer", "trl.trainer.ddpo_config"),
    "AlignPropTrainer": ("trl.trainer", "trl.trainer.alignprop_trainer"),
    "AlignPropConfig": ("trl.trainer", "trl.trainer.alignprop_config"),
    "DDPOStableDiffusionPipeline": ("trl.models", "trl.models.modeling_sd_base"),
    "DefaultDDPOStableDiffusionPipeline": ("trl.models", "trl.models.modeling_sd_base"),
    "aesthetic_scorer": ("trl.models.auxiliary_modules",),
    "AestheticScorer": ("trl.models.auxiliary_modules",),
    "PerPromptStatTracker": ("trl.trainer.utils",),
}
_TOP = ("DDPOTrainer", "DDPOConfig", "AlignPropTrainer", "AlignPropConfig", "DDPOStableDiffusionPipeline",
        "DefaultDDPOStableDiffusionPipeline")


def _table() -> dict[str, Gone | Moved]:
    out: dict[str, Gone | Moved] = {}
    for name, modules in _DIFFUSION.items():
        for module in (*(("trl",) if name in _TOP else ()), *modules):
            out[f"{module}.{name}"] = Moved("compat.trl", name, _NOTE)
    for name, stem in _ITERATIVE_NAMES.items():
        for p in (f"trl.{name}", f"trl.trainer.{name}", f"trl.trainer.{stem}.{name}"):
            out[p] = Gone(_ITERATIVE)
    return out


class RemovedDdpoAlignpropIterativeSft(SymbolMigration):
    summary = "DDPO / AlignProp (removed in 0.24) -> compat.trl (reference on TRL >= 0.24); IterativeSFT -> marked"
    triggers = ("DDPO", "AlignProp", "IterativeSFT", "auxiliary_modules", "PerPromptStatTracker")
    symbols = _table()


MIGRATION = RemovedDdpoAlignpropIterativeSft()
