"""`feature-extractor-aliases`: before/after and no-op cases."""

from __future__ import annotations

from migrations.atlas import Atlas
from migrations.transformers.v5_0._feature_extractors import ALIASES
from migrations.transformers.v5_0.feature_extractor_aliases import MIGRATION as RULE
from tests.migrations._driver import check, noop


def test_renamed():
    # lmflow's RAFT-diffusion notebook imports it beside the text model
    check(RULE, "from transformers import CLIPFeatureExtractor, CLIPTextModel\n"
                "fe = CLIPFeatureExtractor.from_pretrained('openai/clip-vit-base-patch32')\n",
          "from transformers import CLIPTextModel\nfrom transformers import CLIPImageProcessor\n"
          "fe = CLIPImageProcessor.from_pretrained('openai/clip-vit-base-patch32')\n")
    check(RULE, "import transformers\n\n\nclass Mine(transformers.ViTFeatureExtractor):\n    pass\n\n\n"
                "p = transformers.ViTFeatureExtractor(size=224)\n",
          "import transformers\n\n\nclass Mine(transformers.ViTImageProcessor):\n    pass\n\n\n"
          "p = transformers.ViTImageProcessor(size=224)\n")
    check(RULE, "from transformers.models.detr.feature_extraction_detr import DetrFeatureExtractor as FE\n"
                "fe = FE()\n",
          "from transformers import DetrImageProcessor as FE\nfe = FE()\n")


def test_facts():
    atlas = Atlas.load("transformers")
    newest = atlas.releases()[-1]
    assert len(set(ALIASES.values())) == 28 and ALIASES["transformers.CLIPFeatureExtractor"] == "CLIPImageProcessor"
    for old, new in ALIASES.items():
        assert atlas.has("4.56.2", old) and not atlas.has(newest, old), old
        assert atlas.has("4.56.2", f"transformers.{new}") and atlas.has(newest, f"transformers.{new}"), new
    assert not any("Whisper" in q or "Wav2Vec2" in q for q in ALIASES)  # audio extractors are classes of their own


def test_noop():
    # a use where the class name matters, an audio extractor, a local class of that name, a 4.x target
    noop(RULE, "from transformers import CLIPFeatureExtractor\nok = isinstance(p, CLIPFeatureExtractor)\n")
    noop(RULE, "from transformers import CLIPFeatureExtractor\nname = CLIPFeatureExtractor.__name__\n")
    noop(RULE, "from transformers import WhisperFeatureExtractor\nfe = WhisperFeatureExtractor.from_pretrained(p)\n")
    noop(RULE, "class CLIPFeatureExtractor:\n    pass\n\n\nfe = CLIPFeatureExtractor()\n")
    noop(RULE, "from transformers import CLIPImageProcessor\nfe = CLIPImageProcessor()\n")
    noop(RULE, "from transformers import CLIPFeatureExtractor\nfe = CLIPFeatureExtractor()\n",
         stack={"transformers": "4.57.6"})
