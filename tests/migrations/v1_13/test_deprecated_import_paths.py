"""`deprecated-import-paths`: before/after and no-op cases."""

from __future__ import annotations

from migrations.v1_13.deprecated_import_paths import MIGRATION as PATHS
from tests.migrations._driver import check, noop


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
    # still exported by every target (a FutureWarning wrapper): never rewritten
    noop(PATHS, """\
        import trl
        from trl import create_reference_model, GRPOConfig
        from trl.models.utils import create_reference_model as crm
        ref = create_reference_model(model)
        ref2 = trl.create_reference_model(model, num_shared_layers=2)
    """)
    noop(PATHS, "from trl.experimental.utils import create_reference_model\ncreate_reference_model(m)\n")
    noop(PATHS, "from compat.trl import create_reference_model\ncreate_reference_model(m)\n")
