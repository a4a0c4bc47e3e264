"""removed-script-fields: the fields TRL 0.27 took off its script dataclasses, on their instances.

`ModelConfig.torch_dtype` (deprecated in 0.23 for `dtype`: 0.23 - 0.26 kept it as a field that `__post_init__`
copied into `dtype` when `dtype` was unset) and `ScriptArguments.gradient_checkpointing_use_reentrant` (also on
`GRPOScriptArguments` / `RLOOScriptArguments`; parsed, never read by TRL) are gone in 0.27 (read from the wheels; the
table is derived from the atlas, `migrations.kinds.script_fields.removed_fields`). On a name bound once to a
`ModelConfig(...)` call or to the `ModelConfig` position of a parser's output (`TrlParser((ScriptArguments,
SFTConfig, ModelConfig)).parse_args_and_config()`, resolved by qualified name):

* `model_config.torch_dtype` (read or written) -> `model_config.dtype`, `ModelConfig(torch_dtype=)` -> `dtype=`: the
  same option on every release that has `dtype` (0.23 on). Its default is `"float32"` since 0.27 (`torch_dtype`
  defaulted to None, which transformers 4 loaded as float32): a read tested against None or for truth is marked;
* `script_args.gradient_checkpointing_use_reentrant` is marked: set `gradient_checkpointing_kwargs=` on the training
  config.

A local class of the same name, a subclass (which may declare its own field), a rebound name are left alone.
"""

from __future__ import annotations

from migrations.kinds.script_fields import ScriptFieldsMigration


class RemovedScriptFields(ScriptFieldsMigration):
    summary = ("ModelConfig.torch_dtype -> .dtype on parsed/constructed instances (and torch_dtype=); "
               "ScriptArguments.gradient_checkpointing_use_reentrant marked")


MIGRATION = RemovedScriptFields()
