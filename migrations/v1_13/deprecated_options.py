"""Deprecated-but-working TRL options that predate the 1.13 line, rewritten to their successors.

They were all deprecated before 1.9 (`vllm_importance_sampling_cap` in 1.6; `use_transformers_paged`,
`packing_strategy="bfd-requeue"`, `pad_token=`, `truncation_mode="keep_end"` and `get_training_chat_template(tokenizer=)`
already warn in the 1.9.0 wheel) and still warn (`FutureWarning`, removal announced for v2.0.0) on every line up to 1.16, so they live
in the folder of the first supported line. Each was verified in the 1.9 and 1.16 wheels: the successor exists and the
config's `__post_init__` maps the old option onto it exactly:

* `GRPOConfig` / `RLOOConfig(use_transformers_paged=X)` -> `use_transformers_continuous_batching=X`;
* `GRPOConfig(vllm_importance_sampling_cap=X)` -> `vllm_importance_sampling_clip_max=X`;
* `SFTConfig(packing_strategy="bfd-requeue")` -> `"bfd_split"` (a rename);
* `get_training_chat_template(tokenizer=X)` -> `processing_class=X`;
* TODO only: `pad_token=` (SFT/DPO/Reward configs: set `tokenizer.pad_token` and pass the tokenizer) and
  `truncation_mode="keep_end"` (its only successor, `keep_start`, truncates the other end).
"""

from __future__ import annotations

from migrations.kinds.options import (
    DPO_CONFIGS,
    GRPO_CONFIGS,
    OptionChange,
    OptionMigration,
    REWARD_CONFIGS,
    RLOO_CONFIGS,
    SFT_CONFIGS,
)

_TEMPLATE = frozenset({"trl.get_training_chat_template", "trl.chat_template_utils.get_training_chat_template"})


class DeprecatedOptions(OptionMigration):
    fix_safety = "safe"
    summary = ("deprecated config options -> successors: use_transformers_paged, vllm_importance_sampling_cap, "
               "bfd-requeue, get_training_chat_template(tokenizer=); TODO for pad_token=, keep_end")
    triggers = ("use_transformers_paged", "vllm_importance_sampling_cap", "bfd-requeue", "pad_token", "keep_end",
                "get_training_chat_template")
    changes = (
        OptionChange(GRPO_CONFIGS | RLOO_CONFIGS, "use_transformers_paged", "rename-key",
                     new_key="use_transformers_continuous_batching",
                     message="deprecated before TRL 1.9, removal in 2.0"),
        OptionChange(GRPO_CONFIGS, "vllm_importance_sampling_cap", "rename-key",
                     new_key="vllm_importance_sampling_clip_max", message="deprecated since TRL 1.6, removal in 2.0"),
        OptionChange(SFT_CONFIGS, "packing_strategy", "rename-value", old_value="bfd-requeue",
                     new_value="bfd_split", message="renamed; the old value is deprecated, removal in 2.0"),
        OptionChange(_TEMPLATE, "tokenizer", "rename-key", new_key="processing_class",
                     message="the tokenizer= argument is deprecated, removal in 2.0"),
        OptionChange(SFT_CONFIGS | DPO_CONFIGS | REWARD_CONFIGS, "pad_token", "todo",
                     message="pad_token= is deprecated (removal in TRL 2.0): set tokenizer.pad_token to this value "
                             "and pass the tokenizer as processing_class, then drop pad_token="),
        OptionChange(SFT_CONFIGS | DPO_CONFIGS, "truncation_mode", "todo", old_value="keep_end",
                     message='truncation_mode="keep_end" is deprecated (removal in TRL 2.0) and "keep_start" cuts the '
                             "other end: truncate the data yourself or accept keep_start"),
    )


MIGRATION = DeprecatedOptions()
