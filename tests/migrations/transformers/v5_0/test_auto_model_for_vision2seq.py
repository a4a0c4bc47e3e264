"""`auto-model-for-vision2seq`: the rename under a transformers 5 pin, the compat name elsewhere, no-op cases, and the mapping fact it rests on."""

from __future__ import annotations

import importlib.metadata

from packaging.version import Version

from migrations.atlas import Atlas
from migrations.transformers.v5_0.auto_model_for_vision2seq import MIGRATION as RULE
from migrations.transformers.v5_0.auto_model_for_vision2seq import (
    NOT_ON_4_56,
    VISION2SEQ_4_56,
    VISION2SEQ_4_57,
)
from tests.migrations._driver import assert_check_passes, check, noop, run


def _pinned(tmp_path, pin: str = "transformers>=5.0") -> str:
    (tmp_path / "requirements.txt").write_text(f"trl>=1.13\n{pin}\n")
    return str(tmp_path / "train.py")


def test_under_a_transformers_5_pin_import_and_uses_are_renamed(tmp_path):
    path = _pinned(tmp_path)
    for before, after in (
        ("from transformers import AutoModelForVision2Seq, AutoProcessor\n\nmodel = AutoModelForVision2Seq.from_pretrained(path)\n",
         "from transformers import AutoProcessor\nfrom transformers import AutoModelForImageTextToText\n\n"
         "model = AutoModelForImageTextToText.from_pretrained(path)\n"),
        ("import transformers\n\nm = transformers.AutoModelForVision2Seq.from_config(cfg)\n",
         "import transformers\n\nm = transformers.AutoModelForImageTextToText.from_config(cfg)\n"),
        ("from transformers.models.auto.modeling_auto import AutoModelForVision2Seq as V\n\nm = V.from_pretrained(p)\n",
         "from transformers import AutoModelForImageTextToText as V\n\nm = V.from_pretrained(p)\n"),
    ):
        out, _ = run(RULE, before, path=path)
        assert out == after, out


def test_a_4x_target_does_not_need_the_rule():
    # AutoModelForVision2Seq still exists on 4.56/4.57: the rule belongs to the 5.0 folder and a 4.x target skips it
    noop(RULE, "from transformers import AutoModelForVision2Seq\n", stack={"transformers": "4.57.6"})


def test_where_4_56_or_4_57_may_be_installed_the_import_gets_the_compat_name(tmp_path):
    """Without a pin that excludes 4.56/4.57 (none, or `transformers>=4.56`), a checkpoint named at run time may be an
    instructblipvideo / video_llava one, which only Vision2Seq loads there: `compat.trl.AutoModelForVision2Seq` (that
    very class there, ImageTextToText on 5.x), uses unchanged."""
    check(RULE, "from transformers import AutoModelForVision2Seq, AutoProcessor\n\n"
                "model = AutoModelForVision2Seq.from_pretrained(path)\n",
          "from transformers import AutoProcessor\nfrom compat.trl import AutoModelForVision2Seq\n\n"
          "model = AutoModelForVision2Seq.from_pretrained(path)\n")
    out, _ = run(RULE, "import transformers\n\nm = transformers.AutoModelForVision2Seq.from_config(cfg)\n",
                 path=_pinned(tmp_path, "transformers>=4.56"))
    assert "compat.trl.AutoModelForVision2Seq.from_config(cfg)" in out and "import compat.trl" in out


def test_the_compat_name_is_the_installed_class(tmp_path):
    import transformers

    import compat.trl

    expected = getattr(transformers, "AutoModelForVision2Seq", None) or transformers.AutoModelForImageTextToText
    assert compat.trl.AutoModelForVision2Seq is expected
    assert_check_passes(tmp_path, "from compat.trl import AutoModelForVision2Seq\n\n"
                                  "m = AutoModelForVision2Seq.from_pretrained('p')\n")


def test_noop():
    noop(RULE, "from transformers import AutoModelForImageTextToText\n")
    noop(RULE, "class AutoModelForVision2Seq:\n    pass\n\nm = AutoModelForVision2Seq()\n")  # a local class
    noop(RULE, "from .modeling import AutoModelForVision2Seq\n")  # a vendored copy


def test_the_successor_exists_on_every_release_the_manifest_allows():
    atlas = Atlas.load("transformers")
    for release in [r for r in atlas.releases() if Version(r) >= Version("4.56.2")]:
        assert atlas.has(release, "transformers.AutoModelForImageTextToText"), release
    assert not atlas.has("5.0.0", "transformers.AutoModelForVision2Seq")


def test_the_mapping_fact_on_the_installed_transformers():
    """The rule's claim, held against the installed release's own auto tables (5.x in make test, 4.56.2 in the
    tox env stack-floor): every 4.56.2 Vision2Seq model type loads the same class through ImageTextToText, but
    the two video types on 4.x."""
    from transformers.models.auto import modeling_auto as ma

    itt = dict(ma.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES)
    installed = Version(importlib.metadata.version("transformers"))
    if installed < Version("5"):
        v2s = dict(ma.MODEL_FOR_VISION_2_SEQ_MAPPING_NAMES)
        if installed.release[:3] == (4, 56, 2):
            assert v2s == VISION2SEQ_4_56
        if installed.release[:2] == (4, 57):
            assert v2s == VISION2SEQ_4_57
        missing = sorted(k for k in v2s if k not in itt)
        assert missing == sorted(NOT_ON_4_56)
        assert all(itt[k] == v for k, v in v2s.items() if k in itt)
    else:
        assert not hasattr(ma, "AutoModelForVision2Seq")
        # 4.57.6's table holds 4.56.2's: the compat name's claim on 5.x
        assert all(itt.get(k) == v for k, v in VISION2SEQ_4_57.items()), \
            {k: (v, itt.get(k)) for k, v in VISION2SEQ_4_57.items() if itt.get(k) != v}
