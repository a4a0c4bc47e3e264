"""`removed-adamw`: transformers' AdamW (removed in 4.50) -> compat.trl.AdamW, at the import and each use."""

from __future__ import annotations

from migrations.atlas import Atlas
from migrations.transformers.v4_50.removed_adamw import MIGRATION as RULE
from tests.migrations._driver import assert_check_passes, check, noop


def test_imports_and_attribute_uses_move():
    # chatglm-maths c00_toy_cpu_train_6b.py (the import), C-Optim ppo_tldr.py (transformers.AdamW(...))
    check(RULE,
          "from transformers import AdamW, get_linear_schedule_with_warmup\n\n"
          "optim = AdamW(model.parameters(), lr=2e-5, correct_bias=False)\n",
          "from transformers import get_linear_schedule_with_warmup\nfrom compat.trl import AdamW\n\n"
          "optim = AdamW(model.parameters(), lr=2e-5, correct_bias=False)\n")
    check(RULE,
          "import transformers\n\noptim = transformers.AdamW(params, betas=(0.9, 0.95), weight_decay=0.1)\n",
          "import transformers\nimport compat.trl\n\n"
          "optim = compat.trl.AdamW(params, betas=(0.9, 0.95), weight_decay=0.1)\n")
    check(RULE,
          "from transformers.optimization import AdamW as HFAdamW\n\nopt = HFAdamW(params)\n",
          "from compat.trl import AdamW as HFAdamW\n\nopt = HFAdamW(params)\n")


def test_noop():
    noop(RULE, "from torch.optim import AdamW\n\nopt = AdamW(params)\n")
    noop(RULE, "import torch\n\nopt = torch.optim.AdamW(params)\n")
    noop(RULE, "class AdamW:\n    pass\n\n\nopt = AdamW()\n")
    noop(RULE, "from transformers import Trainer\n\nnote = 'transformers.AdamW(params)'\n")


def test_gone_from_4_50(tmp_path):
    atlas = Atlas.load("transformers")
    assert atlas.has("4.49.0", "transformers.AdamW") and atlas.has("4.49.0", "transformers.optimization.AdamW")
    for release in ("4.50.3", "4.56.2", "5.24.0"):
        assert not atlas.has(release, "transformers.AdamW"), release
    assert_check_passes(tmp_path, "import transformers\nfrom compat.trl import AdamW\n\n"
                                  "opt = AdamW([], lr=1e-3, correct_bias=False)\n")
