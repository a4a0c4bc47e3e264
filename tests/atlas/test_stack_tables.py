"""The committed tables of the transformers rules are what `python -m migrations.atlas.stack_tables` derives from the
committed atlas (so regenerating the atlas and forgetting the tables fails here)."""

from __future__ import annotations

from migrations.atlas import Atlas
from migrations.atlas.stack_tables import (
    attention_classes,
    deepspeed_moves,
    moved_names,
    tokenizer_classes,
)
from migrations.transformers.v4_46._deepspeed_moves import MOVES
from migrations.transformers.v4_48._attention_classes import GONE as ATTENTION
from migrations.transformers.v5_0._moved_names import MOVES as MOVED
from migrations.transformers.v5_0._tokenizer_classes import GONE as TOKENIZERS


def test_tables_are_regenerated_from_the_atlas():
    t = Atlas.load("transformers")
    assert deepspeed_moves(t) == MOVES
    assert attention_classes(t) == ATTENTION
    assert tokenizer_classes(t) == TOKENIZERS
    assert moved_names(t) == MOVED


def test_feature_extractor_table_is_regenerated_from_the_floor_wheel():
    import os

    import pytest

    from migrations.atlas.stack_tables import FLOOR, WHEELS, feature_extractor_aliases
    from migrations.transformers.v5_0._feature_extractors import ALIASES

    wheel = os.path.join(WHEELS, f"transformers-{FLOOR}-py3-none-any.whl")
    if not os.path.isfile(wheel):
        pytest.skip(f"{wheel} not downloaded (python -m migrations.atlas.generate fetches it)")
    assert feature_extractor_aliases(Atlas.load("transformers"), wheel) == ALIASES
