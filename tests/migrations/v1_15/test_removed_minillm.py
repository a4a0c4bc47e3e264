"""`removed-minillm`: before/after and no-op cases."""

from __future__ import annotations

from migrations.v1_15.removed_minillm import MIGRATION as MINILLM
from tests.migrations._driver import check, noop, run


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
    assert "# TODO(trl-compat): MiniLLMConfig(rkl_advantage=...) has no DistillationConfig" in out
    assert any("MiniLLMConfig(rkl_advantage=...) has no DistillationConfig counterpart" in f.message for f in findings)
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
