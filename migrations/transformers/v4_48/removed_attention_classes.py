"""transformers 4.48 folded the per-implementation attention classes (`LlamaFlashAttention2`,
`LlamaSdpaAttention`, ... for every family) into one `<Family>Attention` that dispatches on
`config._attn_implementation`.

Not mechanical: code that imports these classes usually subclasses or patches them to change the attention of one
implementation; `<Family>Attention` now serves every implementation, so a patch would apply to all of them. The rule
marks each import and use: choose the implementation with `attn_implementation="flash_attention_2"` / `"sdpa"` /
`"eager"` in `from_pretrained`, and register custom kernels through `AttentionInterface`. The table
(`_attention_classes`, generated from the atlas) lists each class with the first release without it; a name is
marked only when the target transformers lacks it.
"""

from __future__ import annotations

import copy

import libcst as cst
from packaging.version import Version

from migrations.base import Options, RuleContext
from migrations.kinds.symbols import Gone, SymbolMigration
from migrations.transformers.v4_48._attention_classes import GONE


def _message(qual: str, release: str) -> str:
    name = qual.rsplit(".", 1)[-1]
    family = qual.rsplit(".", 1)[0].rsplit(".", 1)[-1].replace("modeling_", "")
    return (f"{name} was removed in transformers {release.rsplit('.', 1)[0]} (one attention class per model now): "
            f"use the model's {family} attention class and pick the kernel with "
            "from_pretrained(..., attn_implementation=\"flash_attention_2\" / \"sdpa\" / \"eager\")")


class RemovedAttentionClasses(SymbolMigration):
    summary = "*FlashAttention2 / *SdpaAttention classes (removed in 4.48) -> TODO: attn_implementation="
    triggers = ("FlashAttention", "SdpaAttention")
    requires = ("transformers",)
    symbols = {qual: Gone(_message(qual, release)) for qual, release in GONE.items()}

    def applies(self, options: Options) -> bool:
        if not super().applies(options):
            return False
        target = options.target(self.library)
        return any(Version(r) <= target for r in GONE.values())  # type: ignore[operator]

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        target = ctx.options.target(self.library)
        rule = copy.copy(self)  # only the names the target lacks
        rule.symbols = {q: a for q, a in self.symbols.items() if target is not None and Version(GONE[q]) <= target}
        return SymbolMigration.transform(rule, wrapper, ctx)


MIGRATION = RemovedAttentionClasses()
