"""`deprecated-options`: before/after and no-op cases."""

from __future__ import annotations

from migrations.v1_13.deprecated_options import MIGRATION as OPTIONS
from tests.migrations._driver import check, noop, run


def test_deprecated_options_renames():
    check(OPTIONS, """\
        from trl import GRPOConfig, SFTConfig
        from trl.trainer.rloo_config import RLOOConfig as R

        g = GRPOConfig(use_transformers_paged=True, vllm_importance_sampling_cap=3.0)
        r = R(output_dir="o", use_transformers_paged=flag)
        s = SFTConfig(packing=True, packing_strategy='bfd-requeue')
    """, """\
        from trl import GRPOConfig, SFTConfig
        from trl.trainer.rloo_config import RLOOConfig as R

        g = GRPOConfig(use_transformers_continuous_batching=True, vllm_importance_sampling_clip_max=3.0)
        r = R(output_dir="o", use_transformers_continuous_batching=flag)
        s = SFTConfig(packing=True, packing_strategy='bfd_split')
    """)


def test_deprecated_options_module_access_and_subclass_configs():
    check(OPTIONS, """\
        import trl
        from trl.experimental.gmpo import GMPOConfig
        from trl import get_training_chat_template
        a = trl.GRPOConfig(
            vllm_importance_sampling_cap=2.0,  # keep this comment
        )
        b = GMPOConfig(use_transformers_paged=True)
        t = get_training_chat_template(tokenizer=tok)
    """, """\
        import trl
        from trl.experimental.gmpo import GMPOConfig
        from trl import get_training_chat_template
        a = trl.GRPOConfig(
            vllm_importance_sampling_clip_max=2.0,  # keep this comment
        )
        b = GMPOConfig(use_transformers_continuous_batching=True)
        t = get_training_chat_template(processing_class=tok)
    """)


def test_deprecated_options_todos():
    out, findings = run(OPTIONS, """\
        from trl import SFTConfig, DPOConfig, GRPOConfig
        a = SFTConfig(pad_token="<pad>")
        b = DPOConfig(truncation_mode="keep_end")
        c = GRPOConfig(use_transformers_paged=True, use_transformers_continuous_batching=False)
    """)
    assert out.count("# TODO(trl-compat)") == 3
    messages = " ".join(f.message for f in findings)
    assert "set tokenizer.pad_token" in messages and "keep_start" in messages
    assert "both use_transformers_paged=" in messages
    assert "use_transformers_paged=True, use_transformers_continuous_batching=False" in out  # left for a human
    assert all(f.severity == "manual" for f in findings)


def test_deprecated_options_noops():
    noop(OPTIONS, """\
        from mylib import GRPOConfig
        GRPOConfig(use_transformers_paged=True)
    """)
    noop(OPTIONS, """\
        from trl import SFTConfig, DPOConfig, KTOConfig
        SFTConfig(packing_strategy="bfd", truncation_mode="keep_start")
        DPOConfig(truncation_mode=mode)
        KTOConfig(pad_token=None)  # KTOConfig has no deprecated pad_token
    """)
    noop(OPTIONS, """\
        def f(GRPOConfig):
            return GRPOConfig(vllm_importance_sampling_cap=1.0)
    """)
    noop(OPTIONS, 'd = dict(use_transformers_paged=True)\nprint("bfd-requeue")\n')
