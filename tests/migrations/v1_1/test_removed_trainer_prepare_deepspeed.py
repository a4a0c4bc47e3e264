"""Before/after and no-op cases for `removed-trainer-prepare-deepspeed`."""

from __future__ import annotations

from migrations.v1_1.removed_trainer_prepare_deepspeed import MIGRATION as RULE
from tests.migrations._driver import noop, run


def test_marked():
    out, _ = run(RULE, """\
        from trl.trainer.utils import prepare_deepspeed
        ref = prepare_deepspeed(ref, 8, bf16=True)
    """)
    assert out.count("# TODO(trl-compat): trl.trainer.utils.prepare_deepspeed was") == 2


def test_the_surviving_function_is_left_alone():
    noop(RULE, """\
        from trl.models.utils import prepare_deepspeed
        ref = prepare_deepspeed(ref, accelerator)
    """)
