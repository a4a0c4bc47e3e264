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

from dataclasses import dataclass, field

__all__ = ["ChatArguments", "DPOScriptArguments", "DpoScriptArguments", "RewardScriptArguments", "SFTScriptArguments", "SftScriptArguments",
           "TrustRemoteCodeArguments"]


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


# -- TRL 0.8.0 - 0.8.6: `SftScriptArguments`, `DpoScriptArguments` (removed in 0.9.2) -------------------------------
# Their training fields (SFT: dataset_text_field, packing; DPO: beta, max_length) are fields of SFTConfig / DPOConfig
# now, which the migrated script parses in the same TrlParser; a copy holding them would make the parser fail on the
# duplicated options, so these copies leave them out (and `config`, as above) and the migration `old-script-arguments`
# points the script's reads of them at the config. The other fields keep the 0.8.2 - 0.8.6 defaults (read from the
# wheels: 0.8.0 - 0.8.1's DPO `sanity_check` defaulted to True, which that migration marks); `dataset_train_name` /
# `dataset_test_name` exist from 0.8.5 on (a superset for older scripts: two more options, same defaults).


@dataclass
class SftScriptArguments:
    """TRL 0.8 `trl.commands.cli_utils.SftScriptArguments` without `dataset_text_field`, `packing` (SFTConfig
    fields now) and `config`: dataset_name ("timdettmers/openassistant-guanaco"), dataset_train_name ("train"),
    dataset_test_name ("test"), max_seq_length (512; SFTConfig calls it max_length), gradient_checkpointing_use_reentrant
    (False)."""

    dataset_name: str = "timdettmers/openassistant-guanaco"
    dataset_train_name: str = "train"
    dataset_test_name: str = "test"
    max_seq_length: int = 512
    gradient_checkpointing_use_reentrant: bool = False


@dataclass
class DpoScriptArguments:
    """TRL 0.8 `trl.commands.cli_utils.DpoScriptArguments` without `beta`, `max_length` (DPOConfig fields now) and
    `config`: dataset_name (None), max_prompt_length (128), max_target_length (128), sanity_check (False; True in
    0.8.0 - 0.8.1), ignore_bias_buffers (False), generate_during_eval (False), gradient_checkpointing_use_reentrant
    (False)."""

    dataset_name: str = None  # type: ignore[assignment]  # as TRL: `str` annotated, None by default
    max_prompt_length: int = 128
    max_target_length: int = 128
    sanity_check: bool = False
    ignore_bias_buffers: bool = False
    generate_during_eval: bool = False
    gradient_checkpointing_use_reentrant: bool = False


# -- `ChatArguments` (TRL 0.8.5 - 0.12.2, identical there; `trl.scripts.chat` 0.13 - 0.18, removed in 0.19) --------


@dataclass
class ChatArguments:
    """TRL 0.12.2 `trl.commands.cli_utils.ChatArguments` (the `trl chat` / `examples/scripts/chat.py` options) without
    `config`: same fields, types, defaults and `--torch_dtype` choices. TRL 0.11-0.12's `TrlParser` took `--config`
    off the command line before parsing, so that field only ever held "default"; TRL >= 0.13's `TrlParser` reads
    `--config FILE` itself (and `examples`, a mapping, comes from that file as before)."""

    model_name_or_path: str = field(metadata={"help": "Name of the pre-trained model"})
    user: str = None  # type: ignore[assignment]  # TRL's annotations, None defaults
    system_prompt: str = None  # type: ignore[assignment]
    save_folder: str = "./chat_history/"
    device: str = "cpu"
    examples: str = None  # type: ignore[assignment]
    max_new_tokens: int = 256
    do_sample: bool = True
    num_beams: int = 1
    temperature: float = 1.0
    top_k: int = 50
    top_p: float = 1.0
    repetition_penalty: float = 1.0
    eos_tokens: str = None  # type: ignore[assignment]
    eos_token_ids: str = None  # type: ignore[assignment]
    model_revision: str = "main"
    torch_dtype: str = field(default=None, metadata={"choices": ["auto", "bfloat16", "float16", "float32"]})  # type: ignore[assignment]
    trust_remote_code: bool = False
    attn_implementation: str = None  # type: ignore[assignment]
    load_in_8bit: bool = False
    load_in_4bit: bool = False
    bnb_4bit_quant_type: str = "nf4"
    use_bnb_nested_quant: bool = False


# -- `--trust_remote_code` (TRL <= 1.6 `ModelConfig`; 1.7 moved it to the training configs) -----------------------


@dataclass
class TrustRemoteCodeArguments:
    """The `--trust_remote_code` option of TRL 0.9 - 1.6 `ModelConfig` (TRL 1.7 removed the field and declared it on
    SFT/DPO/GRPO/KTO/RLOO/RewardConfig instead), for a parser whose other dataclasses have no such field on the
    target (the project's own PPO config, an OnlineDPOConfig of its own, TrainingArguments): the migration
    `model-config-trust-remote-code` appends this class to the parser's tuple, so the command line, a `--config`
    YAML key and the default (False) stay what they were. The field and help text of TRL 1.0.0."""

    trust_remote_code: bool = field(
        default=False,
        metadata={
            "help": "Whether to allow for custom models defined on the Hub in their own modeling files. This option "
            "should only be set to `True` for repositories you trust and in which you have read the code, as it will "
            "execute code present on the Hub on your local machine."
        },
    )
