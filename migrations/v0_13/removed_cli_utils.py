"""removed-cli-utils: `trl.commands.cli_utils` (gone in TRL 0.13): `TrlParser`, `init_zero_verbose` -> `trl`;
`SFTScriptArguments` / `DPOScriptArguments` / `RewardScriptArguments` -> `compat.trl`.

TRL 0.8 - 0.12 kept the script helpers in `trl.commands.cli_utils`; 0.13 removed the module (read from the 0.12.2 and
0.13.0 wheels). `TrlParser` and `init_zero_verbose` are exported by `trl` on every target, so imports move there.
The three `*ScriptArguments` dataclasses (0.11 - 0.12; `trl` and `trl.commands` exported SFT/DPO) have no exact
successor in TRL (`trl.ScriptArguments` has other fields and defaults), so they move to `compat.trl`, which keeps the
0.12.2 dataclasses (`compat/_script_args.py`: same fields, defaults and order but `config`, which TRL >= 0.13's
`TrlParser` reserves and reads itself as `--config FILE`; so the same command line). Code written against 0.11 sees
one change: `dataset_name` is required (0.11 gave SFT/reward a default dataset), hence "unsafe".
Anything else of the module (`YamlConfigParser`, `ChatArguments`, the 0.8 `SftScriptArguments` /
`DpoScriptArguments`, ...) is marked.
"""

from __future__ import annotations

from migrations.kinds.symbols import Moved, SymbolMigration

_MOD = "trl.commands.cli_utils"
_SCRIPT_ARGS = ("SFTScriptArguments", "DPOScriptArguments", "RewardScriptArguments")
_NOTE = "removed from TRL in 0.13; trl-compat keeps the 0.12.2 dataclass (the project now needs trl-compat)"


class RemovedCliUtils(SymbolMigration):
    summary = ("trl.commands.cli_utils (removed in 0.13): TrlParser/init_zero_verbose -> trl; *ScriptArguments -> "
               "compat.trl (the 0.12.2 dataclasses)")
    triggers = ("cli_utils", "ScriptArguments")
    removed_modules = {_MOD: "trl.commands.cli_utils was removed in TRL 0.13: import from trl"}
    symbols = {
        f"{_MOD}.TrlParser": Moved("trl", "TrlParser", "the module was removed in TRL 0.13"),
        f"{_MOD}.init_zero_verbose": Moved("trl", "init_zero_verbose", "the module was removed in TRL 0.13"),
        **{p: Moved("compat.trl", n, _NOTE) for n in _SCRIPT_ARGS
           for p in (f"{_MOD}.{n}", f"trl.{n}", f"trl.commands.{n}")},
    }


MIGRATION = RemovedCliUtils()
