"""removed-trainer-utils: helpers TRL 0.29 dropped from `trl.trainer.utils` / `trl`.

Read from the 0.28.0 and 0.29.0 wheels:
* `cap_exp`, `get_exp_cap` (small tensor helpers) -> `compat.trl` copies of the 0.28 bodies;
* `RunningMoments` (a running mean/std over an Accelerator), `FDivergenceConstants`, `FDivergenceType` (DPO's
  f-divergence enum; `DPOConfig.f_divergence_type` now takes the plain strings) -> marked;
* the other public helpers `trl.trainer.utils` lost between 0.27 and 1.0 (found with the API atlas:
  `migrations.atlas`, names of 0.8 - 0.24 absent on 1.16): those TRL moved to `trl.experimental.utils` (or `trl`)
  with the same parameters on 1.13 and 1.16 are moved there (`first_true_indices`, `get_reward`, `pad_to_length`,
  `DataCollatorForChatML`, `RichProgressCallback`, ...); the rest (no successor, or a changed signature such as
  `truncate_right`'s `stop_token_id` -> `stop_token_ids`) are marked.
"""

from __future__ import annotations

from migrations.kinds.symbols import Gone, Moved, SymbolMigration

_NOTE = "removed from TRL in 0.29; trl-compat keeps the 0.28 function (the project now needs trl-compat)"
_MOMENTS = "RunningMoments was removed in TRL 0.29: copy it from TRL 0.28 (trl/trainer/utils.py)"
_FDIV = "removed in TRL 0.29: pass the f-divergence as a string, e.g. f_divergence_type=\"reverse_kl\""


# moved by TRL with the same parameters on 1.13 and 1.16 (atlas signatures): name -> new module
_MOVED = {
    "DataCollatorForChatML": "trl.experimental.utils", "add_bos_token_if_needed": "trl.experimental.utils",
    "add_eos_token_if_needed": "trl.experimental.utils", "empty_cache": "trl.experimental.utils",
    "first_true_indices": "trl.experimental.utils", "get_reward": "trl.experimental.utils",
    "pad_to_length": "trl.experimental.utils", "peft_module_casting_to_bf16": "trl.experimental.utils",
    "RichProgressCallback": "trl", "is_unsloth_available": "trl.import_utils",
}
_NO_SUCCESSOR = ("AdaptiveKLController", "FixedKLController", "OnPolicyConfig", "OnlineTrainerState",
                 "PerPromptStatTracker", "RewardDataCollatorWithPadding", "batch_generation", "compute_accuracy",
                 "decode_and_strip_padding", "exact_div", "flush_right", "forward", "generate",
                 "get_global_statistics", "neftune_post_forward_hook", "print_rich_table",
                 "trl_sanitze_kwargs_for_tagging", "truncate_response")
_CHANGED = {
    "DPODataCollatorWithPadding": "trl.experimental.utils.DPODataCollatorWithPadding lost label_pad_token_id",
    "truncate_right": "trl.experimental.utils.truncate_right takes stop_token_ids (a list) now",
    "DataCollatorForLanguageModeling": "trl.trainer.sft_trainer.DataCollatorForLanguageModeling is another class",
}


def _table() -> dict[str, Moved | Gone]:
    out: dict[str, Moved | Gone] = {}
    for name, module in _MOVED.items():
        out[f"trl.trainer.utils.{name}"] = Moved(module, name, "moved by TRL, same parameters")
    for name in _NO_SUCCESSOR:
        out[f"trl.trainer.utils.{name}"] = Gone(f"trl.trainer.utils.{name} is gone (TRL 0.27 - 1.0), no successor: "
                                                "copy it from the TRL your code pinned")
    for name, why in _CHANGED.items():
        out[f"trl.trainer.utils.{name}"] = Gone(f"trl.trainer.utils.{name} is gone: {why}")
    for name in ("cap_exp", "get_exp_cap"):
        out[f"trl.trainer.utils.{name}"] = Moved("compat.trl", name, _NOTE)
    for p in ("trl.trainer.utils.RunningMoments", "trl.trainer.RunningMoments"):
        out[p] = Gone(_MOMENTS)
    for name in ("FDivergenceConstants", "FDivergenceType"):
        for p in (f"trl.{name}", f"trl.trainer.{name}", f"trl.trainer.dpo_config.{name}"):
            out[p] = Gone(f"{name} " + _FDIV)
    return out


class RemovedTrainerUtils(SymbolMigration):
    summary = "trl.trainer.utils helpers gone in 0.27-1.0: cap_exp -> compat.trl, moved ones -> their new module, " \
              "the rest marked"
    triggers = ("cap_exp", "get_exp_cap", "RunningMoments", "FDivergence", "trainer.utils", "trainer import")
    symbols = _table()


MIGRATION = RemovedTrainerUtils()
