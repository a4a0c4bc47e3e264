"""removed-simple-chat-template: `trl.trainer.utils.SIMPLE_CHAT_TEMPLATE` (gone in TRL 0.27) -> `compat.trl`.

The plain "Role: content" template the 0.x example scripts set on tokenizers without one was removed in 0.27 (read
from the 0.26.2 and 0.27.0 wheels). `compat.trl.SIMPLE_CHAT_TEMPLATE` is the same string.
"""

from __future__ import annotations

from migrations.v1_14._symbols import Moved, SymbolMigration


class RemovedSimpleChatTemplate(SymbolMigration):
    id = "removed-simple-chat-template"
    release = "0.27"
    summary = "trl.trainer.utils.SIMPLE_CHAT_TEMPLATE (removed in 0.27) -> compat.trl.SIMPLE_CHAT_TEMPLATE"
    anchor = "removed-simple-chat-template"
    triggers = ("SIMPLE_CHAT_TEMPLATE",)
    symbols = {p: Moved("compat.trl", "SIMPLE_CHAT_TEMPLATE", "removed from TRL in 0.27; same string (the project now needs trl-compat)")
               for p in ("trl.trainer.utils.SIMPLE_CHAT_TEMPLATE", "trl.trainer.SIMPLE_CHAT_TEMPLATE")}


MIGRATION = RemovedSimpleChatTemplate()
