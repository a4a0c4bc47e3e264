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


def test_a_dict_splatted_into_from_pretrained_calls():
    """KMnO4-zx/huanhuan-chat (ChatGLM-Efficient-Tuning): `config_kwargs` with "use_auth_token" splatted into the
    config's, the tokenizer's and the model's from_pretrained (a key write of another key is fine). A dict used
    elsewhere too is left alone."""
    from tests.migrations._driver import run

    out, _ = run(RULE, """\
        from transformers import AutoConfig, AutoModel, AutoTokenizer

        def load(args):
            config_kwargs = {"trust_remote_code": True, 'use_auth_token': True if args.use_auth_token else None}
            tokenizer = AutoTokenizer.from_pretrained(args.name, **config_kwargs)
            config_kwargs["load_in_8bit"] = True
            config = AutoConfig.from_pretrained(args.name, **config_kwargs)
            return AutoModel.from_pretrained(args.name, config=config, **config_kwargs)

        def other(args):
            opts = dict(use_auth_token=True)
            print(opts)
            return AutoModel.from_pretrained(args.name, **opts)
    """)
    assert "'token': True if args.use_auth_token else None" in out
    assert "opts = dict(use_auth_token=True)" in out
