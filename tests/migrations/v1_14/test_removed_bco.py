"""`removed-bco`: before/after and no-op cases."""

from __future__ import annotations

from migrations.v1_14.removed_bco import MIGRATION as BCO
from tests.migrations._driver import check, noop, run


def test_bco_from_import():
    findings = check(BCO, """\
        from trl.experimental.bco import BCOConfig, BCOTrainer

        trainer = BCOTrainer(model, args=BCOConfig(output_dir="out"), train_dataset=ds)
    """, """\
        from compat.trl import BCOConfig, BCOTrainer

        trainer = BCOTrainer(model, args=BCOConfig(output_dir="out"), train_dataset=ds)
    """)
    assert findings and all(f.changed for f in findings)


def test_bco_aliased_and_mixed_with_other_names():
    check(BCO, """\
        from trl.experimental.bco import BCOTrainer as T, BCOConfig
        from trl import KTOTrainer
        T(args=BCOConfig())
    """, """\
        from compat.trl import BCOTrainer as T, BCOConfig
        from trl import KTOTrainer
        T(args=BCOConfig())
    """)


def test_bco_module_alias_attribute_use():
    check(BCO, """\
        import trl.experimental.bco as bco

        cfg = bco.BCOConfig(output_dir="x")
        trainer = bco.BCOTrainer(model, args=cfg)
    """, """\
        import compat.trl

        cfg = compat.trl.BCOConfig(output_dir="x")
        trainer = compat.trl.BCOTrainer(model, args=cfg)
    """)


def test_bco_dotted_import_keeps_trl_binding_when_used():
    check(BCO, """\
        import trl.experimental.bco

        t = trl.experimental.bco.BCOTrainer(model)
        g = trl.GRPOConfig()
    """, """\
        import trl
        import compat.trl

        t = compat.trl.BCOTrainer(model)
        g = trl.GRPOConfig()
    """)


def test_bco_from_experimental_import_module():
    check(BCO, """\
        from trl.experimental import bco, online_dpo

        t = bco.BCOTrainer(model)
    """, """\
        from trl.experimental import online_dpo
        import compat.trl

        t = compat.trl.BCOTrainer(model)
    """)


def test_bco_submodule_path_and_guarded_import():
    check(BCO, """\
        try:
            from trl.experimental.bco.bco_trainer import BCOTrainer
        except ImportError:
            BCOTrainer = None
    """, """\
        try:
            from compat.trl import BCOTrainer
        except ImportError:
            BCOTrainer = None
    """)


def test_bco_unknown_name_gets_todo():
    out, findings = run(BCO, """\
        from trl.experimental.bco.bco_trainer import _process_tokens
        _process_tokens(row)
    """)
    assert out.startswith("# TODO(trl-compat): trl.experimental.bco was removed in TRL 1.14")
    assert out.splitlines()[0].endswith(" [removed-bco]") and findings[0].anchor == "removed-bco"
    assert [f.severity for f in findings] == ["manual", "manual"]  # the import and the use


def test_bco_noops():
    noop(BCO, """\
        from compat.trl import BCOTrainer, BCOConfig
        BCOTrainer(args=BCOConfig())
    """)
    noop(BCO, """\
        from mylib.bco import BCOTrainer  # not TRL's
        BCOTrainer()
    """)
    noop(BCO, """\
        def make(BCOTrainer):
            return BCOTrainer(model)  # a parameter, not an import
    """)
    noop(BCO, """\
        bco = load("bco")
        bco.BCOTrainer()
    """)


def test_bco_kept_when_targeting_1_13():
    src = "from trl.experimental.bco import BCOTrainer\n"
    out, _ = run(BCO, src, target="1.13.0")
    assert out == src
