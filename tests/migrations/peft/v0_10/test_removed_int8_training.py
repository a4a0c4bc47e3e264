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


def test_peft_0_2_keywords_point_at_the_kept_copy():
    check(RULE, """\
        from peft import LoraConfig, prepare_model_for_int8_training
        m = prepare_model_for_int8_training(m, output_embedding_layer_name="embed_out", layer_norm_names=["ln"])
        """, """\
        from peft import LoraConfig
        from compat.trl import prepare_model_for_int8_training
        m = prepare_model_for_int8_training(m, output_embedding_layer_name="embed_out", layer_norm_names=["ln"])
        """)
    # one 0.2 call decides for the file: the plain call ran on peft 0.2 too
    check(RULE, """\
        import peft
        a = peft.prepare_model_for_int8_training(a)
        b = peft.prepare_model_for_int8_training(b, layer_norm_names=[])
        """, """\
        import peft
        import compat.trl

        a = compat.trl.prepare_model_for_int8_training(a)
        b = compat.trl.prepare_model_for_int8_training(b, layer_norm_names=[])
        """)


def test_kbit_keywords_are_renamed():
    check(RULE, "from peft import prepare_model_for_int8_training as prep\n"
                "m = prep(m, gradient_checkpointing_kwargs={'use_reentrant': False})\n",
          "from peft import prepare_model_for_kbit_training as prep\n"
          "m = prep(m, gradient_checkpointing_kwargs={'use_reentrant': False})\n")


def test_unknown_keywords_are_marked():
    out, findings = run(RULE, "from peft import prepare_model_for_int8_training\n"
                              "m = prepare_model_for_int8_training(m, layer_norm_names=[], dtype=x)\n")
    assert "# TODO(trl-compat): use prepare_model_for_kbit_training(model) [removed-int8-training]" in out
    assert any("dtype= is not peft 0.2's" in f.message for f in findings)
    assert "from peft import prepare_model_for_int8_training\n" in out
    # 0.2's and 0.4+'s keywords together ran on no peft: marked, naming the later one
    out, findings = run(RULE, "from peft import prepare_model_for_int8_training\n"
                              "m = prepare_model_for_int8_training(m, layer_norm_names=[], gradient_checkpointing_kwargs={})\n")
    assert "compat.trl" not in out
    assert any("gradient_checkpointing_kwargs= is not peft 0.2's" in f.message for f in findings)


def test_second_positional_is_marked():
    out, findings = run(RULE, "from peft import prepare_model_for_int8_training\n"
                              "m = prepare_model_for_int8_training(m, False)\n")
    assert "prepare_model_for_int8_training(m, False)" in out
    assert any("peft 0.2's second parameter was output_embedding_layer_name" in f.message for f in findings)
    # blocked wins over the kept copy: every use stays and is marked
    out, _ = run(RULE, "from peft import prepare_model_for_int8_training\n"
                       "a = prepare_model_for_int8_training(a, layer_norm_names=[])\n"
                       "b = prepare_model_for_int8_training(b, True)\n")
    assert "compat.trl" not in out and out.count("TODO(trl-compat)") == 3


def test_int8_keywords_only_existed_in_peft_0_2():
    import os
    import zipfile
    from pathlib import Path

    import pytest

    wheels = Path(os.environ.get("TRL_COMPAT_WHEELS", "/work/cache/wheels"))
    if not (wheels / "peft-0.4.0-py3-none-any.whl").is_file():
        pytest.skip("no peft wheels")
    for version in ("0.4.0", "0.5.0", "0.6.2", "0.7.1", "0.8.2", "0.9.0"):
        text = zipfile.ZipFile(wheels / f"peft-{version}-py3-none-any.whl").read("peft/utils/other.py").decode()
        # the 0.4 - 0.9 alias forwards everything to kbit, whose parameters have no int8-era keyword
        assert "def prepare_model_for_int8_training(*args, **kwargs):" in text, version
        assert "output_embedding_layer_name" not in text, version


def test_facts():
    atlas = Atlas.load("peft")
    assert [str(e) for e in atlas.history("peft.prepare_model_for_int8_training")] == ["added at 0.4.0", "removed at 0.10.0"]
    for release in atlas.releases():
        assert atlas.signature(release, "peft.prepare_model_for_kbit_training").names()[:2] == [
            "model", "use_gradient_checkpointing"]


def test_noop():
    noop(RULE, "from peft import prepare_model_for_kbit_training\nm = prepare_model_for_kbit_training(m)\n")
    noop(RULE, "def prepare_model_for_int8_training(m):\n    return m\n")
