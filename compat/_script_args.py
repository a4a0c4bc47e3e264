"""Copies of the script-argument dataclasses TRL removed in 0.13: `SFTScriptArguments`, `DPOScriptArguments`,
`RewardScriptArguments`.

Served through `compat.trl`; the migration `removed-cli-utils` points imports of `trl.commands.cli_utils` (and of
`trl`, which exported two of them in 0.11 - 0.12) here. Each is the TRL 0.12.2 dataclass (read from the wheel:
`trl/utils.py` `ScriptArguments`, subclassed unchanged in `trl/commands/cli_utils.py`): the same fields, types,
defaults and order, but one: `config`. TRL 0.12's `TrlParser` read `--config FILE` through that field; TRL >= 0.13's
`TrlParser` takes `--config FILE` itself (`parse_args_and_config`) and refuses any dataclass with a `config` field,
so the copies leave it out: the command line stays the same under `trl.TrlParser`, and code reading
`script_args.config` fails loudly (AttributeError) instead of reading a path that is never set. TRL 0.12.2's
`__post_init__` only logged "deprecated, will be removed in v0.13"; that message is left out too.

TRL 0.11 had other defaults: `dataset_name` defaulted to "timdettmers/openassistant-guanaco" (SFT),
"trl-lib/ultrafeedback_binarized" (reward) and None (DPO), where 0.12.2 requires it; `ignore_bias_buffers` was a DPO
field only. Pure dataclasses: importing this module costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DPOScriptArguments", "RewardScriptArguments", "SFTScriptArguments"]


@dataclass
class _ScriptArguments:
    """TRL 0.12.2 `trl.ScriptArguments` (0.13+ changed it; its successor `trl.ScriptArguments` has other fields).

    dataset_name: dataset name (required). dataset_train_split / dataset_test_split: the splits for training and
    evaluation ("train", "test"). (config: left out, see the module docstring.) gradient_checkpointing_use_reentrant:
    `use_reentrant` for gradient checkpointing (False). ignore_bias_buffers: debug flag for distributed training,
    the DDP fix for LM bias/mask buffers (False).
    """

    dataset_name: str
    dataset_train_split: str = "train"
    dataset_test_split: str = "test"
    gradient_checkpointing_use_reentrant: bool = False
    ignore_bias_buffers: bool = False


@dataclass
class SFTScriptArguments(_ScriptArguments):
    """TRL 0.12.2 `trl.SFTScriptArguments` (`trl.commands.cli_utils`, removed in 0.13): the common script fields."""


@dataclass
class DPOScriptArguments(_ScriptArguments):
    """TRL 0.12.2 `trl.DPOScriptArguments` (`trl.commands.cli_utils`, removed in 0.13): the common script fields."""


@dataclass
class RewardScriptArguments(_ScriptArguments):
    """TRL 0.12.2 `trl.commands.cli_utils.RewardScriptArguments` (removed in 0.13): the common script fields."""
