"""Before/after cases for the rules in migrations/v1_13 owned here: dataset_formatting, deprecated options/paths."""

from __future__ import annotations

from migrations.v1_13.removed_dataset_formatting import MIGRATION as FORMATTING
from migrations.v1_13.deprecated_import_paths import MIGRATION as PATHS
from migrations.v1_13.deprecated_options import MIGRATION as OPTIONS
from tests.migrations.breaks._driver import check, noop, run


def test_dataset_formatting_todo_with_replacement():
    out, findings = run(FORMATTING, """\
        import os
        from trl.extras.dataset_formatting import FORMAT_MAPPING

        features = FORMAT_MAPPING["chatml"]
    """)
    lines = out.splitlines()
    assert lines[1].startswith("# TODO(trl-compat): trl.extras.dataset_formatting.FORMAT_MAPPING was removed in TRL")
    assert '"chatml": datasets.List(' in lines[1] and lines[1].endswith("(see MIGRATION.md#removed-dataset-formatting)")
    assert lines[2] == "from trl.extras.dataset_formatting import FORMAT_MAPPING"
    assert lines[4].startswith("# TODO(trl-compat)") and lines[5] == 'features = FORMAT_MAPPING["chatml"]'
    assert len(findings) == 2


def test_dataset_formatting_module_forms_and_noops():
    out, _ = run(FORMATTING, """\
        import trl.extras.dataset_formatting as df
        x = df.get_formatting_func_from_dataset(ds, tok)
    """)
    assert out.count("# TODO(trl-compat)") == 2 and "drop the formatting function" in out
    noop(FORMATTING, "from trl.extras.profiling import profiling_decorator\n")
    noop(FORMATTING, "dataset_formatting = 1\nFORMAT_MAPPING = {}\n")
    assert run(FORMATTING, "from trl.extras.dataset_formatting import FORMAT_MAPPING\n", target="1.12.0")[0] == (
        "from trl.extras.dataset_formatting import FORMAT_MAPPING\n")


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
    assert "set tokenizer.pad_token" in out and "keep_start" in out and "both use_transformers_paged=" in out
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


def test_deprecated_import_paths():
    check(PATHS, """\
        from trl.experimental.distillation import DistillationConfig, DistillationTrainer as DT
        from trl.experimental.kto import KTOTrainer
        import trl.experimental.kto as kto_exp
        cfg = kto_exp.KTOConfig()
    """, """\
        from trl import DistillationConfig, DistillationTrainer as DT
        from trl import KTOTrainer
        import trl.experimental.kto as kto_exp
        import trl

        cfg = trl.KTOConfig()
    """)
    check(PATHS, """\
        from trl.experimental.distillation.distillation_trainer import DistillationTrainer
    """, """\
        from trl import DistillationTrainer
    """)
    noop(PATHS, "from trl import KTOTrainer, DistillationTrainer\nfrom trl.experimental.gkd import GKDTrainer\n")


def test_create_reference_model_path():
    check(PATHS, """\
        import trl
        from trl import create_reference_model, GRPOConfig
        from trl.models.utils import create_reference_model as crm
        ref = create_reference_model(model)
        ref2 = trl.create_reference_model(model, num_shared_layers=2)
    """, """\
        import trl
        from trl import GRPOConfig
        from compat.trl import create_reference_model
        from compat.trl import create_reference_model as crm
        import compat.trl

        ref = create_reference_model(model)
        ref2 = compat.trl.create_reference_model(model, num_shared_layers=2)
    """)
    noop(PATHS, "from trl.experimental.utils import create_reference_model\ncreate_reference_model(m)\n")
    noop(PATHS, "from compat.trl import create_reference_model\ncreate_reference_model(m)\n")
