"""Before/after and no-op cases for `removed-trainer-prepare-deepspeed`."""

from __future__ import annotations

from migrations.v1_1.removed_trainer_prepare_deepspeed import MIGRATION as RULE
from tests.migrations._driver import noop, run


def test_the_import_moves_to_the_compat_copy():
    """aligning-to-what's copy of TRL 0.9's PPOv2Trainer: the import moves, the calls stay, nothing is marked."""
    for target in ("1.16.0", "1.13.0"):
        out, findings = run(RULE, """\
            from trl.trainer.utils import disable_dropout_in_model, prepare_deepspeed
            ref = prepare_deepspeed(ref, 8, bf16=True)
        """, target=target)
        assert "from trl.trainer.utils import disable_dropout_in_model\n" in out
        assert "from compat.trl import prepare_deepspeed\n" in out
        assert "ref = prepare_deepspeed(ref, 8, bf16=True)" in out
        assert "TODO(trl-compat)" not in out
        assert not [f for f in findings if f.severity == "manual"]


def test_a_module_import_is_rewritten_at_its_use():
    out, _ = run(RULE, """\
        import trl.trainer.utils as tu
        ref = tu.prepare_deepspeed(ref, 8)
    """)
    assert "prepare_deepspeed(ref, 8)" in out and "tu.prepare_deepspeed" not in out
    assert "compat.trl" in out


def test_the_surviving_function_is_left_alone():
    noop(RULE, """\
        from trl.models.utils import prepare_deepspeed
        ref = prepare_deepspeed(ref, accelerator)
    """)


def test_a_local_function_of_that_name_is_left_alone():
    noop(RULE, """\
        def prepare_deepspeed(model, batch_size):
            return model
        ref = prepare_deepspeed(ref, 8)
    """)
