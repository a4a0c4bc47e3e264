"""Before/after cases for the TRL 1.15 and 1.16 rules owned here (chunked_nll has its own tests elsewhere)."""

from __future__ import annotations

import textwrap

from migrations.v1_15.deprecated_options_1_15 import MIGRATION as DEPRECATED
from migrations.v1_15.removed_dft_loss import MIGRATION as DFT
from migrations.v1_15.removed_minillm import MIGRATION as MINILLM
from migrations.v1_15.patch_chunked_lm_head_to_fused import MIGRATION as PATCH
from migrations.v1_15.removed_prepare_multimodal_messages_vllm import MIGRATION as PMMV
from migrations.v1_15.use_liger_kernel_to_kernels import MIGRATION as LIGER
from migrations.v1_16.removed_ssd import MIGRATION as SSD
from tests.migrations.breaks._driver import check, noop, run

# -- use_liger_kernel ---------------------------------------------------------------------------------------------


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


# -- patch_chunked_lm_head ----------------------------------------------------------------------------------------


def test_patch_chunked_lm_head_call_rewritten_with_todo():
    out, findings = run(PATCH, """\
        from trl.trainer.utils import patch_chunked_lm_head

        patch_chunked_lm_head(model, 4096, 0.7)
    """)
    assert out.splitlines()[0] == "from trl.trainer import add_fused_lm_head"
    assert out.splitlines()[-1] == 'add_fused_lm_head(model, temperature=0.7, outputs=("log_probs", "entropy"))'
    assert "fused_lm_head=True" in out and out.count("# TODO(trl-compat)") == 1
    assert any(f.changed for f in findings) and any(f.severity == "manual" for f in findings)


def test_patch_chunked_lm_head_keywords_alias_and_router():
    out, _ = run(PATCH, """\
        import trl.trainer as tt
        tt.patch_chunked_lm_head(model=m, chunk_size=cs, temperature=t, output_router_logits=True)
    """)
    assert "trl.trainer.add_fused_lm_head(m, temperature=t, outputs=(\"log_probs\", \"entropy\"))" in out
    assert "output_router_logits is set" in out
    noop(PATCH, "from trl.trainer import add_fused_lm_head\nadd_fused_lm_head(model)\n")
    noop(PATCH, "def patch_chunked_lm_head(m): ...\npatch_chunked_lm_head(model)\n")


# -- dft_loss -----------------------------------------------------------------------------------------------------


def test_dft_loss_to_loss_type():
    out, findings = run(DFT, """\
        from trl import SFTConfig, SFTTrainer
        from trl.trainer.sft_trainer import dft_loss

        trainer = SFTTrainer(model, args=SFTConfig(output_dir="o"), compute_loss_func=dft_loss)
    """)
    assert out == textwrap.dedent("""\
        from trl import SFTConfig, SFTTrainer

        trainer = SFTTrainer(model, args=SFTConfig(output_dir="o", loss_type="dft"))
    """)
    out, _ = run(DFT, """\
        from trl import SFTConfig, SFTTrainer
        from trl.trainer.sft_trainer import dft_loss

        trainer = SFTTrainer(model, args=SFTConfig(output_dir="o"), compute_loss_func=dft_loss)
        print(dft_loss)
    """)
    assert "from compat.trl import dft_loss" in out and 'loss_type="dft"' in out


def test_dft_loss_config_elsewhere_gets_todo():
    out, _ = run(DFT, """\
        from trl import SFTTrainer
        from trl.trainer.sft_trainer import dft_loss as dft
        SFTTrainer(model, args=cfg, compute_loss_func=dft)
    """)
    assert "from compat.trl import dft_loss as dft" in out
    assert 'set loss_type="dft"' in out and "compute_loss_func=dft)" in out
    noop(DFT, "from mylib import dft_loss\nSFTTrainer(compute_loss_func=dft_loss)\n")


# -- minillm ------------------------------------------------------------------------------------------------------


def test_minillm_covered_case_rewritten():
    check(MINILLM, """\
        from trl.experimental.minillm import MiniLLMConfig, MiniLLMTrainer

        args = MiniLLMConfig(output_dir="o", max_completion_length=64, temperature=0.9)
        trainer = MiniLLMTrainer(model, teacher, args=args, train_dataset=ds)
    """, """\
        from trl import DistillationConfig, DistillationTrainer

        args = DistillationConfig(output_dir="o", max_completion_length=64, temperature=0.9)
        trainer = DistillationTrainer(model, teacher, args=args, train_dataset=ds)
    """)


def test_minillm_uncovered_option_blocks_the_whole_name():
    out, findings = run(MINILLM, """\
        from trl.experimental.minillm import MiniLLMConfig, MiniLLMTrainer

        a = MiniLLMConfig(output_dir="o")
        b = MiniLLMConfig(rkl_advantage=False)
        trainer = MiniLLMTrainer(model=m, teacher_model=t, args=a)
    """)
    assert "from trl import DistillationTrainer" in out
    assert "from trl.experimental.minillm import MiniLLMConfig" in out
    assert "MiniLLMConfig(rkl_advantage=...) has no DistillationConfig counterpart" in out
    assert 'a = MiniLLMConfig(output_dir="o")' in out
    assert "trainer = DistillationTrainer(model=m, teacher_model=t, args=a)" in out


def test_minillm_reward_funcs_and_subclass_todo():
    out, _ = run(MINILLM, """\
        import trl.experimental.minillm as mm
        class T(mm.MiniLLMTrainer):
            pass
        mm.MiniLLMTrainer(m, t, [reward])
    """)
    assert out.count("# TODO(trl-compat)") == 3 and "import trl.experimental.minillm as mm" in out
    noop(MINILLM, "from trl import DistillationTrainer\nDistillationTrainer(m, t)\n")


# -- prepare_multimodal_messages_vllm, deprecated 1.15 options, ssd -----------------------------------------------


def test_prepare_multimodal_messages_vllm():
    check(PMMV, """\
        import trl
        from trl.data_utils import prepare_multimodal_messages_vllm as prep
        a = prep(msgs)
        b = trl.prepare_multimodal_messages_vllm(msgs)
    """, """\
        import trl
        from compat.trl import prepare_multimodal_messages_vllm as prep
        import compat.trl

        a = prep(msgs)
        b = compat.trl.prepare_multimodal_messages_vllm(msgs)
    """)
    noop(PMMV, "from trl import prepare_multimodal_messages\nprepare_multimodal_messages(m)\n")


def test_deprecated_1_15_options():
    out, _ = run(DEPRECATED, """\
        from trl import SFTTrainer, SFTConfig
        SFTTrainer(model, args=SFTConfig(label_smoothing_factor=0.1), compute_loss_func=my_loss)
    """)
    assert out.count("# TODO(trl-compat)") == 2
    noop(DEPRECATED, """\
        from trl import SFTTrainer, SFTConfig
        from compat.trl import dft_loss
        SFTTrainer(model, args=SFTConfig(label_smoothing_factor=0.0), compute_loss_func=dft_loss)
    """)
    noop(DEPRECATED, "from transformers import Trainer\nTrainer(model, compute_loss_func=f)\n")


def test_ssd():
    src = "from trl.experimental.ssd import SSDConfig, SSDTrainer\n"
    out, findings = run(SSD, src)
    assert out.startswith("# TODO(trl-compat): trl.experimental.ssd was removed in TRL 1.16")
    assert run(SSD, src, target="1.15.0")[0] == src
    noop(SSD, "from trl.experimental.sdpo import SDPOTrainer\nssd = 1\n")
