"""sft-packing-strategy: `SFTConfig(packing=True)` of code written before TRL 0.19, whose packing the default changed.

Up to 0.18 (wheels) packing joined the samples and cut the stream at the length (`ConstantLengthDataset`, then
`pack_examples`), what `packing_strategy="wrapped"` does today; 0.19 added `packing_strategy` ("ffd") and 0.20 made
"bfd" the default (atlas): whole samples packed best-fit, each one longer than the length truncated, padding-free. A
0.x script's `packing=True` (LvBaolu/Mixtral_V2, trl==0.7.4) now trains on other sequences without a word.

Not rewritten: the 0.x buffer and shuffle are not "wrapped"'s either, so the strategy is the user's choice. Marked at
each SFT config call (`SFTConfig`, `GKDConfig`, resolved by qualified name) with a `packing=` other than False/None
and no `packing_strategy=`, when the repository's TRL pin (the nearest manifest above the file, as committed) admits
only releases before 0.19. It runs after `trainer-kwargs-to-config` (0.13's folder), so a `packing=` that rule moved
from a 0.x `SFTTrainer(...)` into the config is seen there, on the first run and the next alike.
"""

from __future__ import annotations

import functools
from pathlib import Path

import libcst as cst
from libcst.metadata import QualifiedNameProvider
from packaging.version import Version

from migrations.base import MigrationTransformer, PythonMigration, RuleContext
from migrations.kinds.imports import imported_names
from migrations.kinds.options import SFT_CONFIGS
from migrations.kinds.pins import pinned

#: SFTConfig gained packing_strategy in 0.19; before it packing was what "wrapped" does now
_STRATEGIES = Version("0.19.0")
MESSAGE = ('set packing_strategy: TRL before 0.19 packed by joining the samples and cutting the stream at the length '
           '(packing_strategy="wrapped" now); 0.20+ defaults to "bfd" (whole samples, the overflow truncated, '
           "padding-free)")


@functools.lru_cache(maxsize=64)
def _old_pin(folder: str) -> bool:
    """The repository's TRL pin admits only releases before 0.19 (and some)."""
    from migrations.atlas import Atlas

    admitted = pinned(folder, Atlas.load("trl").releases())
    return bool(admitted) and all(Version(r) < _STRATEGIES for r in admitted)


class _Transformer(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if not imported_names(self, original_node.func) & SFT_CONFIGS:
            return updated_node
        given = {a.keyword.value: a.value for a in original_node.args if a.keyword is not None}
        packing = given.get("packing")
        if packing is None or "packing_strategy" in given or any(a.star for a in original_node.args) or \
                (isinstance(packing, cst.Name) and packing.value in ("False", "None")):
            return updated_node
        self.todo(original_node, MESSAGE)
        return updated_node


class SftPackingStrategy(PythonMigration):
    summary = "SFTConfig(packing=True) under a TRL pin before 0.19: marked (0.20+ packs best-fit, 0.x joined and cut)"
    triggers = ("packing",)
    requires = ("trl",)

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        if ctx.path is None or not _old_pin(str(Path(ctx.path).parent)):
            return wrapper.module
        return wrapper.visit(_Transformer(self, ctx))


MIGRATION = SftPackingStrategy()
