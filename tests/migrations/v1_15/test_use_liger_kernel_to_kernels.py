"""`use-liger-kernel-to-kernels`: before/after and no-op cases."""

from __future__ import annotations

from migrations.v1_15.use_liger_kernel_to_kernels import MIGRATION as LIGER
from tests.migrations._driver import check, noop, run


def test_liger_without_model_init_kwargs():
    check(LIGER, """\
        from trl import SFTConfig
        args = SFTConfig(output_dir="o", use_liger_kernel=True, bf16=True)
    """, """\
        from trl import SFTConfig
        args = SFTConfig(output_dir="o", model_init_kwargs={"use_kernels": True}, bf16=True)
    """)


def test_liger_merged_into_existing_dict_forms():
    check(LIGER, """\
        from trl import GRPOConfig, DPOConfig as D
        import trl
        a = GRPOConfig(use_liger_kernel=True, model_init_kwargs={"dtype": "bfloat16"})
        b = D(model_init_kwargs=dict(dtype="auto"), use_liger_kernel=True)
        c = trl.KTOConfig(model_init_kwargs=base_kwargs, use_liger_kernel=True,)
        d = trl.RLOOConfig(
            model_init_kwargs={
                "dtype": "bfloat16",
            },
            use_liger_kernel=True,
        )
        e = GRPOConfig(use_liger_kernel=True, model_init_kwargs={"use_kernels": False})
    """, """\
        from trl import GRPOConfig, DPOConfig as D
        import trl
        a = GRPOConfig(model_init_kwargs={"dtype": "bfloat16", "use_kernels": True})
        b = D(model_init_kwargs=dict(dtype="auto", use_kernels=True))
        c = trl.KTOConfig(model_init_kwargs={**base_kwargs, "use_kernels": True},)
        d = trl.RLOOConfig(
            model_init_kwargs={
                "dtype": "bfloat16",
                "use_kernels": True,
            },
        )
        e = GRPOConfig(model_init_kwargs={"use_kernels": False})
    """)


def test_liger_false_dropped_variable_todo_and_noops():
    check(LIGER, """\
        from trl import SFTConfig
        SFTConfig(use_liger_kernel=False)
    """, """\
        from trl import SFTConfig
        SFTConfig()
    """)
    out, findings = run(LIGER, "from trl import SFTConfig\nSFTConfig(use_liger_kernel=flag)\n")
    assert out.splitlines()[1].startswith("# TODO(trl-compat): use_liger_kernel is deprecated")
    noop(LIGER, "from transformers import TrainingArguments\nTrainingArguments(use_liger_kernel=True)\n")
    noop(LIGER, "from trl import RewardConfig\nRewardConfig(use_liger_kernel=True)\n")  # not deprecated there
    noop(LIGER, "from trl import SFTConfig\nSFTConfig(model_init_kwargs={'use_kernels': True})\n")
    src = "from trl import SFTConfig\nSFTConfig(use_liger_kernel=True)\n"
    assert run(LIGER, src, target="1.14.0")[0] == src
