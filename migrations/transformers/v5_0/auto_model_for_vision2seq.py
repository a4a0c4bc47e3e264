"""transformers 5.0 removed `AutoModelForVision2Seq` (deprecated in 4.5x: "use `AutoModelForImageTextToText`").

`AutoModelForImageTextToText` is exported by `transformers` on 4.46 .. 5.x (atlas), so on 4.56.2 and every 5.x. The
two auto classes differ only in their model-type -> class tables (`modeling_auto.py` of each wheel, compared in
`VISION2SEQ_4_56` below and its test):

* 5.x (checked on 5.24.0): every model type of 4.56.2's Vision2Seq table is in the ImageTextToText table with the
  same class, so the rename loads the same class for every checkpoint the old class loaded.
* 4.56.2 / 4.57: the same holds for 22 of its 24 model types; `instructblipvideo` and `video_llava` checkpoints load
  only through `AutoModelForVision2Seq` there (they joined the ImageTextToText table in 5.0).

So the rename to `AutoModelForImageTextToText` (import and uses, `AutoModelForVision2Seq.from_pretrained(...)`
included) is made only where the repository's own transformers pin admits no release older than 5.0 (the manifest
rule keeps such a pin): there it loads the same class for every checkpoint. Elsewhere the migrated code may meet
4.56 / 4.57, where a checkpoint named on the command line may be a video model the new class does not load, so the
import moves to `compat.trl.AutoModelForVision2Seq` instead (its uses unchanged): transformers' own class wherever
the installed transformers has it (4.56.2 - 4.57, so the very class the code used), else
`AutoModelForImageTextToText` (5.x, where the class is gone), whose table maps every model type of 4.56.2's and
4.57.6's Vision2Seq table (`VISION2SEQ_4_57`: the two video types, `qwen3_vl` and `qwen3_vl_moe` beside 4.56's) to
the same class on every 5.x release (5.0.0 - 5.24.0 compared in the wheels; the test holds both tables against the
installed release); `transformers.AutoModelForVision2Seq` through `import transformers` becomes
`compat.trl.AutoModelForVision2Seq`.
"""

from __future__ import annotations

import copy

import libcst as cst

from migrations.base import RuleContext
from migrations.kinds.symbols import Moved, SymbolMigration
from migrations.kinds.training_args import pin_admits_none_before

_PATHS = ("transformers.AutoModelForVision2Seq", "transformers.models.auto.AutoModelForVision2Seq",
          "transformers.models.auto.modeling_auto.AutoModelForVision2Seq")

#: `MODEL_FOR_VISION_2_SEQ_MAPPING_NAMES` of transformers 4.56.2 (read from the wheel's
#: `transformers/models/auto/modeling_auto.py`): model type -> class. The test holds it against the installed
#: release's ImageTextToText table.
VISION2SEQ_4_56: dict[str, str] = {
    "blip": "BlipForConditionalGeneration",
    "blip-2": "Blip2ForConditionalGeneration",
    "chameleon": "ChameleonForConditionalGeneration",
    "git": "GitForCausalLM",
    "idefics2": "Idefics2ForConditionalGeneration",
    "idefics3": "Idefics3ForConditionalGeneration",
    "instructblip": "InstructBlipForConditionalGeneration",
    "instructblipvideo": "InstructBlipVideoForConditionalGeneration",
    "kosmos-2": "Kosmos2ForConditionalGeneration",
    "kosmos-2.5": "Kosmos2_5ForConditionalGeneration",
    "llava": "LlavaForConditionalGeneration",
    "llava_next": "LlavaNextForConditionalGeneration",
    "llava_next_video": "LlavaNextVideoForConditionalGeneration",
    "llava_onevision": "LlavaOnevisionForConditionalGeneration",
    "mistral3": "Mistral3ForConditionalGeneration",
    "mllama": "MllamaForConditionalGeneration",
    "ovis2": "Ovis2ForConditionalGeneration",
    "paligemma": "PaliGemmaForConditionalGeneration",
    "pix2struct": "Pix2StructForConditionalGeneration",
    "qwen2_5_vl": "Qwen2_5_VLForConditionalGeneration",
    "qwen2_vl": "Qwen2VLForConditionalGeneration",
    "video_llava": "VideoLlavaForConditionalGeneration",
    "vipllava": "VipLlavaForConditionalGeneration",
    "vision-encoder-decoder": "VisionEncoderDecoderModel",
}
#: `MODEL_FOR_VISION_2_SEQ_MAPPING_NAMES` of transformers 4.57.6 (the wheel): 4.56.2's and two more.
VISION2SEQ_4_57: dict[str, str] = {**VISION2SEQ_4_56, "qwen3_vl": "Qwen3VLForConditionalGeneration",
                                   "qwen3_vl_moe": "Qwen3VLMoeForConditionalGeneration"}
#: The model types of `VISION2SEQ_4_56` that 4.56.2's ImageTextToText table lacks.
NOT_ON_4_56 = ("instructblipvideo", "video_llava")


class AutoModelForVision2Seq(SymbolMigration):
    summary = ("AutoModelForVision2Seq (removed in transformers 5.0) -> AutoModelForImageTextToText; in a file about "
               "video models compat.trl.AutoModelForVision2Seq")
    triggers = ("AutoModelForVision2Seq",)
    requires = ("transformers",)
    symbols = {q: Moved("transformers", "AutoModelForImageTextToText",
                        "same class for every Vision2Seq model type on 5.x; on 4.56/4.57 all but "
                        "instructblipvideo and video_llava") for q in _PATHS}

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        if pin_admits_none_before(ctx.path, "transformers", "5.0.0"):
            return SymbolMigration.transform(self, wrapper, ctx)
        rule = copy.copy(self)  # 4.56 / 4.57 allowed: the compat name, the class itself where it exists
        rule.symbols = {q: Moved("compat.trl", "AutoModelForVision2Seq", "transformers' class up to 4.57, "
                                 "AutoModelForImageTextToText (a superset of its table) on 5.x") for q in _PATHS}
        return SymbolMigration.transform(rule, wrapper, ctx)


MIGRATION = AutoModelForVision2Seq()
