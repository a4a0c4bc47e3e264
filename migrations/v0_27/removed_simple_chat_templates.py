"""removed-simple-chat-templates: the `SIMPLE_*_CHAT_TEMPLATE` strings of `trl.trainer.utils` -> `compat.trl`.

The plain templates the 0.x example scripts set on tokenizers without one went away one by one (read from the wheels):
`SIMPLE_QUERY_CHAT_TEMPLATE` (0.9 - 0.10, removed in 0.11), `SIMPLE_SFT_CHAT_TEMPLATE` (0.9 - 0.24, removed in 0.25)
and `SIMPLE_CHAT_TEMPLATE` (0.11 - 0.26, removed in 0.27, hence this folder). `compat.trl` holds the same strings.
"""

from __future__ import annotations

from migrations.kinds.symbols import Moved, SymbolMigration

_REMOVED_IN = {"SIMPLE_QUERY_CHAT_TEMPLATE": "0.11", "SIMPLE_SFT_CHAT_TEMPLATE": "0.25", "SIMPLE_CHAT_TEMPLATE": "0.27"}


class RemovedSimpleChatTemplates(SymbolMigration):
    summary = "trl.trainer.utils.SIMPLE_*_CHAT_TEMPLATE (removed in 0.11 / 0.25 / 0.27) -> compat.trl (same strings)"
    triggers = ("CHAT_TEMPLATE",)
    symbols = {f"{module}.{name}": Moved("compat.trl", name, f"removed from TRL in {release}; same string "
                                                            "(the project now needs trl-compat)")
               for name, release in _REMOVED_IN.items() for module in ("trl.trainer.utils", "trl.trainer")}


MIGRATION = RemovedSimpleChatTemplates()
