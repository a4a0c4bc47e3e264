"""`moved-names`: before/after and no-op cases."""

from __future__ import annotations

from migrations.atlas import Atlas
from migrations.transformers.v5_0.moved_names import MIGRATION as RULE
from tests.migrations._driver import check, noop


def test_moved():
    check(RULE, "from transformers.tokenization_utils import PreTrainedTokenizer\n",
          "from transformers import PreTrainedTokenizer\n")
    check(RULE, "from transformers.trainer import nested_concat, Trainer\n",
          "from transformers.trainer import Trainer\nfrom transformers.trainer_pt_utils import nested_concat\n")


def test_every_successor_is_the_same_definition_on_the_floor_and_exists_on_the_newest():
    atlas = Atlas.load("transformers")
    for qual, action in RULE.symbols.items():
        new = f"{action.module}.{action.name}"
        assert not atlas.has("5.24.0", qual) and atlas.has("5.24.0", new), qual
        assert atlas.resolve("4.56.2", qual).qualname == atlas.resolve("4.56.2", new).qualname, qual


def test_noop():
    noop(RULE, "from transformers import PreTrainedTokenizer\n")
    noop(RULE, "from transformers.tokenization_utils import PreTrainedTokenizer\n", stack={"transformers": "4.57.6"})
