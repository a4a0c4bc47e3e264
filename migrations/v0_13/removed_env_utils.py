"""removed-env-utils: `trl.env_utils.strtobool` (TRL 0.9.6 - 0.12.2) -> `compat.trl.strtobool`.

TRL 0.9.6 added `trl/env_utils.py` with one function, `strtobool`: `distutils.util.strtobool` (distutils left the
standard library in Python 3.12) returning a bool instead of 1/0. 0.13 deleted the module (the atlas: added at
0.9.6, removed at 0.13.0) with no successor in TRL; scripts imported it to read yes/no environment variables and
flags. The function is six lines with no dependency, so `compat.trl` keeps the 0.12.2 body (the same in 0.9.6 -
0.12.2; `tests/compat/test_strtobool_vs_trl.py` runs both on the same inputs) and imports move there.
"""

from __future__ import annotations

from migrations.kinds.symbols import Moved, SymbolMigration

_NOTE = ("trl.env_utils was removed in TRL 0.13; trl-compat keeps the 0.12.2 function (the project now needs "
         "trl-compat)")


class RemovedEnvUtils(SymbolMigration):
    summary = "trl.env_utils.strtobool (removed in 0.13) -> compat.trl.strtobool (the 0.12.2 function)"
    triggers = ("env_utils",)
    removed_modules = {"trl.env_utils": "trl.env_utils was removed in TRL 0.13: import strtobool from compat.trl"}
    symbols = {"trl.env_utils.strtobool": Moved("compat.trl", "strtobool", _NOTE)}


MIGRATION = RemovedEnvUtils()
