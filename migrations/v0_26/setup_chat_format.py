"""setup-chat-format: `trl.setup_chat_format` (gone in TRL 0.26) -> `compat.trl.setup_chat_format`.

TRL 0.26 removed `setup_chat_format` (deprecated since 0.2x in favour of `clone_chat_template`; read from the 0.25.1 and
0.26.2 wheels). `clone_chat_template(model, tokenizer, source_tokenizer_path)` copies another model's template and
special tokens from the Hub: a different operation (and a download), so it is not a rewrite target. The import moves
to `compat.trl.setup_chat_format`, a copy of the PPO-era (0.8 - 0.12) body: ChatML tokens and template, embedding
resized to `len(tokenizer)`. The project's manifests gain `trl-compat` (`dependency-manifests`).
"""

from __future__ import annotations

from migrations.kinds.symbols import Moved, SymbolMigration

_NOTE = "removed from TRL in 0.26; trl-compat keeps the PPO-era function (the project now needs trl-compat)"


class SetupChatFormat(SymbolMigration):
    summary = "trl.setup_chat_format (removed in 0.26) -> compat.trl.setup_chat_format (the 0.8-0.12 function)"
    triggers = ("setup_chat_format",)
    symbols = {p: Moved("compat.trl", "setup_chat_format", _NOTE)
               for p in ("trl.setup_chat_format", "trl.models.setup_chat_format", "trl.models.utils.setup_chat_format")}


MIGRATION = SetupChatFormat()
