"""`deepspeed-integrations`: before/after and no-op cases."""

from __future__ import annotations

from migrations.atlas import Atlas
from migrations.transformers.v4_46.deepspeed_integrations import MIGRATION as RULE
from tests.migrations._driver import check, noop


def test_the_issue_example_and_every_import_form():
    check(RULE, "from transformers.deepspeed import is_deepspeed_zero3_enabled\n\nif is_deepspeed_zero3_enabled():\n"
                "    pass\n",
          "from transformers.integrations import is_deepspeed_zero3_enabled\n\nif is_deepspeed_zero3_enabled():\n"
          "    pass\n")
    check(RULE, "from transformers.deepspeed import HfDeepSpeedConfig as C, deepspeed_init\n",
          "from transformers.integrations import HfDeepSpeedConfig as C, deepspeed_init\n")
    check(RULE, "import transformers.deepspeed\n\nok = transformers.deepspeed.is_deepspeed_zero3_enabled()\n",
          "import transformers.integrations\n\nok = transformers.integrations.is_deepspeed_zero3_enabled()\n")
    # also for a 4.x target: the successor exists on every release TRL's floor allows
    check(RULE, "from transformers.deepspeed import is_deepspeed_zero3_enabled\n",
          "from transformers.integrations import is_deepspeed_zero3_enabled\n", stack={"transformers": "4.56.2"})


def test_the_module_imported_by_name_among_others():
    # TideDra/VL-RLHF (corpus entry vl-rlhf): the trigger used to miss this form
    check(RULE, "from transformers import GPTQConfig, deepspeed\n\nif deepspeed.is_deepspeed_zero3_enabled():\n"
                "    pass\n",
          "from transformers import GPTQConfig\nimport transformers.integrations\n\n"
          "if transformers.integrations.is_deepspeed_zero3_enabled():\n    pass\n")
    check(RULE, "from transformers import (\n    GPTQConfig,\n    deepspeed,\n)\n\nx = deepspeed.HfDeepSpeedConfig\n",
          "from transformers import GPTQConfig\nimport transformers.integrations\n\n"
          "x = transformers.integrations.HfDeepSpeedConfig\n")
    assert RULE.triggered_by("from transformers import GPTQConfig, deepspeed\n")
    assert not RULE.triggered_by("import deepspeed\nfrom transformers import AutoModel\n")


def test_the_successors_exist_on_the_floor_and_the_newest_release():
    atlas = Atlas.load("transformers")
    for qual, action in RULE.symbols.items():
        assert not atlas.has("4.56.2", qual) and not atlas.has("5.24.0", qual)
        for release in ("4.56.2", "5.24.0"):
            assert atlas.has(release, f"{action.module}.{action.name}"), (qual, release)


def test_noop():
    noop(RULE, "from transformers.integrations import is_deepspeed_zero3_enabled\nimport deepspeed\n")
    noop(RULE, "from .deepspeed import is_deepspeed_zero3_enabled\n")  # a vendored copy
