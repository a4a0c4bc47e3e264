"""`use-auth-token`: before/after and no-op cases."""

from __future__ import annotations

from migrations.transformers.v5_0.use_auth_token import MIGRATION as RULE
from tests.migrations._driver import check, noop, run


def test_renamed():
    check(RULE, "from transformers import AutoTokenizer\nt = AutoTokenizer.from_pretrained(p, use_auth_token=True)\n",
          "from transformers import AutoTokenizer\nt = AutoTokenizer.from_pretrained(p, token=True)\n")
    out, _ = run(RULE, "from transformers import AutoModel\nm = AutoModel.from_pretrained(p, use_auth_token=a, token=b)\n")
    assert out.splitlines()[1].startswith("# TODO(trl-compat): both use_auth_token= and token= are passed")


def test_noop():
    noop(RULE, "from transformers import AutoModel\nm = AutoModel.from_pretrained(p, use_auth_token=True)\n",
         stack={"transformers": "4.57.6"})  # a 4.x target: still accepted there
    noop(RULE, "from huggingface_hub import snapshot_download\nsnapshot_download(p, use_auth_token=True)\n")
