"""`auto-model-for-vision2seq`: before/after, the video-model marker, no-op cases, and the mapping fact it rests on."""

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


def test_import_and_uses_are_renamed():
    check(RULE, "from transformers import AutoModelForVision2Seq, AutoProcessor\n\n"
                "model = AutoModelForVision2Seq.from_pretrained(path)\n",
          "from transformers import AutoProcessor\nfrom transformers import AutoModelForImageTextToText\n\n"
          "model = AutoModelForImageTextToText.from_pretrained(path)\n")
    check(RULE, "import transformers\n\nm = transformers.AutoModelForVision2Seq.from_config(cfg)\n",
          "import transformers\n\nm = transformers.AutoModelForImageTextToText.from_config(cfg)\n")
    check(RULE, "from transformers.models.auto.modeling_auto import AutoModelForVision2Seq as V\n\nm = V.from_pretrained(p)\n",
          "from transformers import AutoModelForImageTextToText as V\n\nm = V.from_pretrained(p)\n")


def test_a_4x_target_does_not_need_the_rule():
    # AutoModelForVision2Seq still exists on 4.56/4.57: the rule belongs to the 5.0 folder and a 4.x target skips it
    noop(RULE, "from transformers import AutoModelForVision2Seq\n", stack={"transformers": "4.57.6"})


def test_a_file_about_video_models_gets_the_compat_name():
    """A video file may load instructblipvideo / video_llava checkpoints, which only Vision2Seq loads on 4.56/4.57:
    it gets `compat.trl.AutoModelForVision2Seq` (that very class there, ImageTextToText on 5.x), uses unchanged."""
    check(RULE, "from transformers import AutoModelForVision2Seq, AutoProcessor\n\n"
                "model = AutoModelForVision2Seq.from_pretrained('LanguageBind/Video-LLaVA-7B-hf')\n",
          "from transformers import AutoProcessor\nfrom compat.trl import AutoModelForVision2Seq\n\n"
          "model = AutoModelForVision2Seq.from_pretrained('LanguageBind/Video-LLaVA-7B-hf')\n")
    out, _ = run(RULE, "import transformers\n\n# video\nm = transformers.AutoModelForVision2Seq.from_config(cfg)\n")
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
