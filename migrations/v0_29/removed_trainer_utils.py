"""removed-trainer-utils: helpers TRL 0.29 dropped from `trl.trainer.utils` / `trl`.

Read from the 0.28.0 and 0.29.0 wheels:
* `cap_exp`, `get_exp_cap` (small tensor helpers) -> `compat.trl` copies of the 0.28 bodies;
* `FDivergenceConstants` (two class constants, the same in 0.9 - 0.28) -> the `compat.trl` copy;
* `RunningMoments` (a running mean/std over an Accelerator), `FDivergenceType` (DPO's f-divergence enum, a plain
  `Enum`: a copy would not equal the strings `DPOConfig.f_divergence_type` takes now) -> marked;
* the PPOv2 / RLOO generation helpers `batch_generation`, `generate`, `forward`, `truncate_response`,
  `print_rich_table` (in `trl.experimental.ppo` from 0.27 to 1.12, gone in 1.13; the same bodies in 0.26.2 and 1.12.0)
  `PeftSavingCallback` (gone in 0.7.5, the 0.7.4 body), `trl_sanitze_kwargs_for_tagging` (gone in 0.14, the 0.13
  body) and `DPODataCollatorWithPadding` (0.27 moved it to
  `trl.experimental.utils` without its `label_pad_token_id` field; the 0.26.2 class) -> the `compat.trl` copies
  (`compat._trainer_utils`);
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
                 "PerPromptStatTracker", "RewardDataCollatorWithPadding", "compute_accuracy",
                 "decode_and_strip_padding", "exact_div", "flush_right", "get_global_statistics",
                 "neftune_post_forward_hook")
# no supported TRL has them: name -> why the compat.trl copy (compat._trainer_utils) is the last TRL body
_COPIED = {
    **{n: "moved to trl.experimental.ppo in TRL 0.27, gone in 1.13; trl-compat keeps the 0.26.2 function (the same "
          "in 1.12)" for n in ("batch_generation", "generate", "forward", "truncate_response", "print_rich_table")},
    "PeftSavingCallback": "removed from TRL in 0.7.5; trl-compat keeps the 0.7.4 callback",
    "trl_sanitze_kwargs_for_tagging": "removed from TRL in 0.14; trl-compat keeps the 0.13 function",
    "DPODataCollatorWithPadding": "trl.experimental.utils's class has no label_pad_token_id (fixed at -100); "
                                  "trl-compat keeps the 0.26.2 class (the same code since 0.8)",
}
_CHANGED = {
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
    for name, why in _COPIED.items():
        out[f"trl.trainer.utils.{name}"] = Moved("compat.trl", name, f"{why} (the project now needs trl-compat)")
    for p in ("trl.trainer.utils.RunningMoments", "trl.trainer.RunningMoments"):
        out[p] = Gone(_MOMENTS)
    for p in ("trl.FDivergenceType", "trl.trainer.FDivergenceType", "trl.trainer.dpo_config.FDivergenceType"):
        out[p] = Gone("FDivergenceType " + _FDIV)
    for p in ("trl.FDivergenceConstants", "trl.trainer.FDivergenceConstants",
              "trl.trainer.dpo_config.FDivergenceConstants"):
        out[p] = Moved("compat.trl", "FDivergenceConstants", "removed from TRL in 0.29; trl-compat keeps the 0.28 "
                       "class (the project now needs trl-compat)")
    return out


class RemovedTrainerUtils(SymbolMigration):
    summary = "trl.trainer.utils helpers gone in 0.27-1.0: cap_exp, batch_generation, ... -> compat.trl, moved " \
              "ones -> their new module, the rest marked"
    triggers = ("cap_exp", "get_exp_cap", "RunningMoments", "FDivergence", "trainer.utils", "trainer import")
    symbols = _table()


MIGRATION = RemovedTrainerUtils()
