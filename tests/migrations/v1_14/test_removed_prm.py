"""`removed-prm`: before/after and no-op cases, and the 0.x spelling (`from trl import PRMTrainer`) through the
0.29 move (`experimental-trainer-imports`) to the target's home of PRM."""

from __future__ import annotations

import textwrap

from packaging.version import Version

from compat.migrate.engine import migrate_source
from migrations.base import Options
from migrations.v0_29.experimental_trainer_imports import MIGRATION as EXPERIMENTAL
from migrations.v1_14.removed_prm import MIGRATION as PRM
from tests.migrations._driver import check, noop, run


def test_prm_from_import():
    findings = check(PRM, """\
        from trl.experimental.prm import PRMConfig, PRMTrainer

        trainer = PRMTrainer(model=model, processing_class=tok, args=PRMConfig(output_dir="out"), train_dataset=ds)
    """, """\
        from compat.trl import PRMConfig, PRMTrainer

        trainer = PRMTrainer(model=model, processing_class=tok, args=PRMConfig(output_dir="out"), train_dataset=ds)
    """)
    assert findings and all(f.changed for f in findings)


def test_prm_aliased_and_mixed_with_other_names():
    check(PRM, """\
        from trl.experimental.prm import PRMTrainer as StepRM, PRMConfig
        from trl import ModelConfig, get_peft_config
        StepRM(args=PRMConfig(step_separator="\\n\\n"))
    """, """\
        from compat.trl import PRMTrainer as StepRM, PRMConfig
        from trl import ModelConfig, get_peft_config
        StepRM(args=PRMConfig(step_separator="\\n\\n"))
    """)


def test_prm_module_alias_and_submodule_paths():
    check(PRM, """\
        import trl.experimental.prm as prm
        from trl.experimental.prm.prm_config import PRMConfig

        trainer = prm.PRMTrainer(model, args=PRMConfig(output_dir="x"))
    """, """\
        from compat.trl import PRMConfig
        import compat.trl

        trainer = compat.trl.PRMTrainer(model, args=PRMConfig(output_dir="x"))
    """)


def test_prm_trainer_module_names_and_compute_accuracy():
    """The names 1.13's `trl.experimental.prm.prm_trainer` defines or re-exports from the package: `compute_accuracy`
    (the reward metric of trl.trainer.utils until 0.26) goes to compat.trl's copy of the 1.13 function."""
    check(PRM, """\
        from trl.experimental.prm.prm_trainer import PRMConfig, PRMTrainer, compute_accuracy

        trainer = PRMTrainer(model, args=PRMConfig(output_dir="x"), compute_metrics=compute_accuracy)
    """, """\
        from compat.trl import PRMConfig, PRMTrainer, compute_accuracy

        trainer = PRMTrainer(model, args=PRMConfig(output_dir="x"), compute_metrics=compute_accuracy)
    """)
    src = "from trl.experimental.prm.prm_trainer import compute_accuracy\n"
    assert run(PRM, src, target="1.13.0") == (src, [])


def test_prm_unknown_name_gets_todo():
    out, findings = run(PRM, "from trl.experimental.prm.prm_trainer import score_steps\nscore_steps(x)\n")
    assert out.startswith("# TODO(trl-compat): trl.experimental.prm was removed in TRL 1.14")
    assert out.splitlines()[0].endswith(" [removed-prm]") and findings[0].anchor == "removed-prm"
    assert [f.severity for f in findings] == ["manual", "manual"]  # the import and the use


def test_prm_noops():
    noop(PRM, """\
        from compat.trl import PRMTrainer, PRMConfig
        PRMTrainer(args=PRMConfig())
    """)
    noop(PRM, """\
        from mylib.prm import PRMTrainer  # not TRL's
        PRMTrainer()
    """)
    noop(PRM, """\
        class PRMTrainer:  # a local class of the same name
            pass

        PRMTrainer()
    """)
    noop(PRM, """\
        def make(PRMTrainer):
            return PRMTrainer(model)  # a parameter shadows any import
    """)
    noop(PRM, """\
        from trl import RewardTrainer
        prm = RewardTrainer
        s = "from trl.experimental.prm import PRMTrainer"
    """)


def test_prm_kept_when_targeting_1_13():
    src = "from trl.experimental.prm import PRMConfig, PRMTrainer\n"
    out, findings = run(PRM, src, target="1.13.0")
    assert out == src and not findings


# ------------------------------------------------------------------------- the 0.x spelling, through the 0.29 move
def _chain(src: str, target: str) -> str:
    options = Options(target_trl=Version(target))
    result = migrate_source(textwrap.dedent(src), options=options,
                            rules=[r for r in (EXPERIMENTAL, PRM) if r.applies(options)], path="x.py",
                            verify_idempotent=True)
    assert result.ok, result.errors
    return result.text


_OLD = """\
    from trl import ModelConfig, PRMConfig, PRMTrainer, ScriptArguments

    trainer = PRMTrainer(model=model, processing_class=tok, args=PRMConfig(output_dir="o"), train_dataset=ds)
"""


def test_top_level_spelling_ends_at_the_targets_home():
    assert _chain(_OLD, "1.16.0") == textwrap.dedent("""\
        from trl import ModelConfig, ScriptArguments
        from compat.trl import PRMConfig, PRMTrainer

        trainer = PRMTrainer(model=model, processing_class=tok, args=PRMConfig(output_dir="o"), train_dataset=ds)
    """)
    assert _chain(_OLD, "1.13.0") == textwrap.dedent("""\
        from trl import ModelConfig, ScriptArguments
        from trl.experimental.prm import PRMConfig, PRMTrainer

        trainer = PRMTrainer(model=model, processing_class=tok, args=PRMConfig(output_dir="o"), train_dataset=ds)
    """)


def test_top_level_spelling_alone_and_through_trl_attributes():
    """The 0.29 rule on its own answers for 1.14+ (the engine picks rules by the original text)."""
    out, findings = run(EXPERIMENTAL, _OLD, target="1.14.0")
    assert "from compat.trl import PRMConfig, PRMTrainer" in out and "TODO" not in out
    assert all(f.changed for f in findings)
    check(EXPERIMENTAL, """\
        import trl
        t = trl.PRMTrainer(model, args=trl.PRMConfig(output_dir="o"))
        r = trl.RewardTrainer(model)
    """, """\
        import trl
        import compat.trl

        t = compat.trl.PRMTrainer(model, args=compat.trl.PRMConfig(output_dir="o"))
        r = trl.RewardTrainer(model)
    """)


def test_top_level_spelling_noops():
    noop(EXPERIMENTAL, """\
        from .trl import PRMTrainer  # a vendored copy
        PRMTrainer()
    """)
    noop(EXPERIMENTAL, """\
        from trl import RewardTrainer

        class PRMTrainer(RewardTrainer):  # a local class of the same name
            pass

        PRMTrainer()
    """)
