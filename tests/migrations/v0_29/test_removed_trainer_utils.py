"""Before/after and no-op cases for `removed-trainer-utils`."""

from __future__ import annotations

import pytest

from migrations.v0_29.removed_trainer_utils import MIGRATION as RULE
from tests.migrations._driver import noop, run


def test_cap_exp_moves_and_others_are_marked():
    out, _ = run(RULE, """\
        from trl.trainer.utils import cap_exp, RunningMoments
        from trl import FDivergenceType

        x = cap_exp(logits)
        rm = RunningMoments(accelerator)
        kind = FDivergenceType.REVERSE_KL
    """)
    assert "from compat.trl import cap_exp" in out
    assert out.count("# TODO(trl-compat): RunningMoments was removed in TRL 0.29") == 2
    assert out.count("FDivergenceType removed in TRL 0.29") == 2


def test_atlas_derived_helpers():
    out, findings = run(RULE, """\
        from trl.trainer.utils import first_true_indices, get_reward, truncate_response, pad

        idx = first_true_indices(mask)
    """)
    assert "from trl.experimental.utils import first_true_indices, get_reward" in out
    assert "from trl.trainer.utils import truncate_response, pad" in out
    assert "# TODO(trl-compat): trl.trainer.utils.truncate_response is gone" in out
    assert any("trl.trainer.utils.truncate_response is gone (TRL 0.27 - 1.0)" in f.message for f in findings)


def test_noops():
    noop(RULE, """\
        import trl
        def cap_exp(x):
            return x
        cap_exp(1)
        RunningMoments = None
    """)


def test_cap_exp_copy_matches_the_formula():
    import math

    import torch

    import compat.trl

    x = torch.tensor([1.0, 100.0, 1000.0], dtype=torch.float32)
    cap = math.floor(math.log(torch.finfo(torch.float32).max) * 1e4) / 1e4  # 88.7228, written out in float64
    expected = torch.tensor([math.exp(1.0), math.exp(cap), math.exp(cap)], dtype=torch.float64)
    got = compat.trl.cap_exp(x).double()
    assert torch.allclose(got, expected, rtol=1e-5)
    assert torch.isfinite(got).all()


@pytest.mark.slow  # imports trl
def test_moved_targets_exist_and_gone_names_are_gone_in_the_installed_trl():
    import importlib

    from migrations.v0_29 import removed_trainer_utils as mod

    utils = importlib.import_module("trl.trainer.utils")
    for name, module in mod._MOVED.items():
        assert hasattr(importlib.import_module(module), name), (module, name)
    for name in (*mod._NO_SUCCESSOR, *mod._CHANGED):
        assert not hasattr(utils, name), name
