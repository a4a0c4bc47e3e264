"""transformers 5.0 removed `use_auth_token=` (deprecated since 4.32): `from_pretrained(token=)`.

Every `from_pretrained` of 4.32 .. 4.57 maps `use_auth_token` to `token` (`token = use_auth_token` after a
warning, read in the wheels); 5.0 reads only `token`. `token=` works on 4.56.2 and every 5.x: the rename is exact.
Applied to `<X>.from_pretrained(...)` of every transformers class (models, tokenizers, configs, processors) and
peft's classes (which forward it).
"""

from __future__ import annotations

from migrations.kinds.options import OptionChange, OptionMigration


class UseAuthToken(OptionMigration):
    summary = "from_pretrained(use_auth_token=) -> token= (removed in transformers 5.0)"
    triggers = ("use_auth_token",)
    requires = ("transformers", "peft")
    changes = (
        OptionChange(frozenset(), "use_auth_token", "rename-key", new_key="token",
                     message="transformers 5.0 removed use_auth_token; token= works since 4.32",
                     callee_prefixes=("transformers.", "peft."), callee_suffixes=(".from_pretrained",)),
    )


MIGRATION = UseAuthToken()
