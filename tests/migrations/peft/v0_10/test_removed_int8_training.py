"""`removed-int8-training`: before/after and no-op cases."""

from __future__ import annotations

from migrations.atlas import Atlas
from migrations.peft.v0_10.removed_int8_training import MIGRATION as RULE
from tests.migrations._driver import check, noop, run


def test_renamed():
    check(RULE, "from peft import prepare_model_for_int8_training\nmodel = prepare_model_for_int8_training(model)\n",
          "from peft import prepare_model_for_kbit_training\nmodel = prepare_model_for_kbit_training(model)\n")
    check(RULE, "import peft\nm = peft.prepare_model_for_int8_training(m, use_gradient_checkpointing=False)\n",
          "import peft\nm = peft.prepare_model_for_kbit_training(m, use_gradient_checkpointing=False)\n")


def test_int8_keywords_are_marked():
    out, _ = run(RULE, "from peft import prepare_model_for_int8_training\n"
                              "m = prepare_model_for_int8_training(m, output_embedding_layer_name='lm_head')\n")
    assert "# TODO(trl-compat): prepare_model_for_int8_training was removed in peft 0.10" in out
    assert "prepare_model_for_int8_training(m, output_embedding_layer_name='lm_head')" in out


def test_facts():
    atlas = Atlas.load("peft")
    assert [str(e) for e in atlas.history("peft.prepare_model_for_int8_training")] == ["added at 0.4.0", "removed at 0.10.0"]
    for release in atlas.releases():
        assert atlas.signature(release, "peft.prepare_model_for_kbit_training").names()[:2] == [
            "model", "use_gradient_checkpointing"]


def test_noop():
    noop(RULE, "from peft import prepare_model_for_kbit_training\nm = prepare_model_for_kbit_training(m)\n")
    noop(RULE, "def prepare_model_for_int8_training(m):\n    return m\n")
