"""`trainer-processing-class`: before/after and no-op cases."""

from __future__ import annotations

from migrations.atlas import Atlas
from migrations.transformers.v5_0.trainer_processing_class import MIGRATION as RULE
from tests.migrations._driver import check, noop


def test_renamed():
    check(RULE, "from transformers import Trainer\nt = Trainer(model=m, args=a, tokenizer=tok)\n",
          "from transformers import Trainer\nt = Trainer(model=m, args=a, processing_class=tok)\n")


def test_facts():
    atlas = Atlas.load("transformers")
    assert atlas.accepts("4.56.2", "transformers.Trainer", "processing_class") == "parameter"
    assert atlas.accepts("5.24.0", "transformers.Trainer", "processing_class") == "parameter"
    assert atlas.accepts("4.56.2", "transformers.Trainer", "tokenizer") == "alias"
    assert atlas.accepts("5.0.0", "transformers.Trainer", "tokenizer") is None


def test_noop():
    noop(RULE, "from trl import SFTTrainer\nt = SFTTrainer(model=m, tokenizer=tok)\n")
    noop(RULE, "from transformers import Trainer\nt = Trainer(model=m, tokenizer=tok)\n", stack={"transformers": "4.57.6"})
