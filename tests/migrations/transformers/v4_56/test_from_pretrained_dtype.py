"""`from-pretrained-dtype`: before/after and no-op cases."""

from __future__ import annotations

from migrations.transformers.v4_56.from_pretrained_dtype import MIGRATION as RULE
from tests.migrations._driver import check, noop


def test_models_through_every_import_form():
    check(RULE, "import torch\nfrom transformers import AutoModelForCausalLM as M\n"
                "m = M.from_pretrained('gpt2', torch_dtype=torch.bfloat16)\n",
          "import torch\nfrom transformers import AutoModelForCausalLM as M\n"
          "m = M.from_pretrained('gpt2', dtype=torch.bfloat16)\n")
    check(RULE, "import transformers\nm = transformers.LlamaForCausalLM.from_pretrained(p, torch_dtype='auto')\n",
          "import transformers\nm = transformers.LlamaForCausalLM.from_pretrained(p, dtype='auto')\n",
          stack={"transformers": "4.56.2"})
    check(RULE, "from peft import AutoPeftModelForCausalLM\nm = AutoPeftModelForCausalLM.from_pretrained(p, torch_dtype=t)\n",
          "from peft import AutoPeftModelForCausalLM\nm = AutoPeftModelForCausalLM.from_pretrained(p, dtype=t)\n")


def test_noop():
    noop(RULE, "from transformers import AutoConfig\nc = AutoConfig.from_pretrained(p, torch_dtype='auto')\n")
    noop(RULE, "from transformers import AutoTokenizer\nt = AutoTokenizer.from_pretrained(p, torch_dtype=x)\n")
    noop(RULE, "from mylib import Model\nm = Model.from_pretrained(p, torch_dtype=x)\n")
    noop(RULE, "from trl import ModelConfig\nc = ModelConfig(torch_dtype='bfloat16')\n")
