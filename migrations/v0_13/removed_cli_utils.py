"""removed-cli-utils: `trl.commands.cli_utils` (gone in TRL 0.13): `TrlParser`, `init_zero_verbose` -> `trl`.

TRL 0.8 - 0.12 kept the script helpers in `trl.commands.cli_utils`; 0.13 removed the module (read from the 0.12.2 and
0.13.0 wheels). `TrlParser` and `init_zero_verbose` are exported by `trl` on every target, so imports move there.
`SFTScriptArguments` / `DPOScriptArguments` (0.11 - 0.12, also exported by `trl`) have no exact successor:
`trl.ScriptArguments` has the dataset fields but no `config` or `gradient_checkpointing_use_reentrant`, and another
default `dataset_name`, so they are marked.
"""

from __future__ import annotations

from migrations.kinds.symbols import Gone, Moved, SymbolMigration

_MOD = "trl.commands.cli_utils"
_SCRIPT_ARGS = ("trl.ScriptArguments has the dataset_* fields, not config/gradient_checkpointing_use_reentrant: "
                "switch to it or keep a local dataclass")


class RemovedCliUtils(SymbolMigration):
    summary = "trl.commands.cli_utils (removed in 0.13): TrlParser/init_zero_verbose -> trl; *ScriptArguments marked"
    triggers = ("cli_utils", "ScriptArguments")
    removed_modules = {_MOD: "trl.commands.cli_utils was removed in TRL 0.13: import from trl"}
    symbols = {
        f"{_MOD}.TrlParser": Moved("trl", "TrlParser", "the module was removed in TRL 0.13"),
        f"{_MOD}.init_zero_verbose": Moved("trl", "init_zero_verbose", "the module was removed in TRL 0.13"),
        **{p: Gone(_SCRIPT_ARGS) for n in ("SFTScriptArguments", "DPOScriptArguments", "RewardScriptArguments")
           for p in (f"{_MOD}.{n}", f"trl.{n}")},
    }


MIGRATION = RemovedCliUtils()
