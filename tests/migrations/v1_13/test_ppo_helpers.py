"""`ppo-helpers`: before/after and no-op cases (the PPO case files in `ppo_cases/` cover the rest, run with the other
PPO rules by `test_ppo_to_grpo.py`)."""

from __future__ import annotations

from migrations.v1_13.ppo_helpers import MIGRATION as RULE
from tests.migrations._driver import check, noop, run


def test_set_seed_moves_and_length_sampler_is_defined_locally():
    findings = check(RULE, '''\
        from trl import set_seed
        from trl.core import LengthSampler

        set_seed(0)
        sampler = LengthSampler(4, 16)
    ''', '''\
        from transformers import set_seed
        import numpy


        class LengthSampler:
            """trl.core.LengthSampler (removed in TRL 0.25), kept by trl-compat: a random length in [min_value, max_value)."""

            def __init__(self, min_value, max_value):
                self.values = list(range(min_value, max_value))

            def __call__(self):
                return numpy.random.choice(self.values)


        set_seed(0)
        sampler = LengthSampler(4, 16)
    ''')
    assert [f.message for f in findings if f.changed] == ["trl.core.LengthSampler is now defined locally"]


def test_the_local_length_sampler_draws_what_trl_drew():
    """A review of a migrated tree: the local copy drew with `random.choice`, TRL with `np.random.choice` (0.7.4 and
    0.23.1 `trl/core.py`): a seeded run sampled other lengths. The copy is held against the 0.7.4 wheel's class."""
    import zipfile
    from pathlib import Path

    import numpy
    import pytest

    from migrations.v1_13.ppo_helpers import LOCAL_DEFS

    wheel = Path(__file__).resolve().parents[3] / ".cache" / "wheels" / "trl-0.7.4-py3-none-any.whl"
    if not wheel.exists():
        pytest.skip("the trl 0.7.4 wheel is not cached (make .cache/wheels/.downloaded)")
    core = zipfile.ZipFile(wheel).read("trl/core.py").decode()
    theirs: dict = {"np": numpy}
    exec(core[core.index("class LengthSampler"):core.index("class PPODecorators")], theirs)
    ours: dict = {"numpy": numpy}
    exec(LOCAL_DEFS["LengthSampler"][0], ours)
    numpy.random.seed(3)
    want = [theirs["LengthSampler"](4, 16)() for _ in range(20)]
    numpy.random.seed(3)
    assert [ours["LengthSampler"](4, 16)() for _ in range(20)] == want


def test_wandb_padding_is_defined_locally():
    """TRL 0.4-0.13 `trl.core.WANDB_PADDING = -1` (read in the 0.10.1 wheel's trl/core.py); a DPO subclass of the
    era pads its stats with it."""
    check(RULE, '''\
        from trl.core import WANDB_PADDING

        pad = WANDB_PADDING
    ''', '''\
        WANDB_PADDING = -1  # trl.core.WANDB_PADDING (removed in TRL 0.14), kept by trl-compat: stats padding value


        pad = WANDB_PADDING
    ''')
    # already defined by the module: the import goes, no second definition
    out, _ = run(RULE, "from trl.core import WANDB_PADDING\nWANDB_PADDING = -2\npad = WANDB_PADDING\n")
    assert out.count("WANDB_PADDING =") == 1 and "-2" in out


def test_markers_on_an_import_whose_names_all_leave_stay_in_the_file():
    """`set_seed` moves to transformers (an import line of which is there to join) and `randn_tensor` is dropped and
    marked on the statement: the statement stays, as `from transformers import set_seed`, with its marker (merging
    it away would lose the marker the report lists)."""
    out, findings = run(RULE, "from transformers import AutoTokenizer\nfrom trl.core import set_seed, randn_tensor\n\n"
                              "set_seed(0)\nnoise = randn_tensor(shape)\n")
    assert out.startswith("from transformers import AutoTokenizer\n# TODO(trl-compat): trl.core.randn_tensor was removed")
    assert "\nfrom transformers import set_seed\n" in out
    markers = sum(1 for line in out.splitlines() if "TODO(trl-compat)" in line)
    assert markers == len([f for f in findings if not f.changed]) == 2


def test_the_marker_of_a_removed_import_goes_to_the_next_statement():
    """chatglm-maths: `from trl.core import respond_to_batch, top_k_top_p_filtering` leaves whole (one name defined
    locally, one dropped); the marker of the dropped name went with the statement, while the report listed it. It
    now sits above the next statement, or the block's owner, or at the end of the module; a second run adds none."""
    cases = {
        "from trl.core import respond_to_batch, top_k_top_p_filtering\nimport torch\n\nout = respond_to_batch(m, q)\n":
            "import torch",
        "def f(x):\n    from trl.core import top_k_top_p_filtering\n\n\ny = 1\n": "    pass",
        "def f(x):\n    if x:\n        from trl.core import top_k_top_p_filtering\n    return x\n": "        pass",
        "import torch\nfrom trl.core import top_k_top_p_filtering\n": None,
    }
    for source, below in cases.items():
        out, findings = run(RULE, source)
        assert "from trl" not in out
        lines = out.splitlines()
        marker = next(i for i, line in enumerate(lines) if "trl.core.top_k_top_p_filtering was removed" in line)
        assert lines[marker + 1] == below if below is not None else marker == len(lines) - 1, out
        manual = [f for f in findings if f.severity == "manual"]
        assert len(manual) == out.count("TODO(trl-compat)") == 1, out
        again, _ = run(RULE, out)
        assert again == out


def test_helper_without_successor_is_flagged():
    out, findings = run(RULE, "from trl.core import top_k_top_p_filtering\n\nlogits = top_k_top_p_filtering(x)\n")
    assert "from trl.core" not in out
    assert ("# TODO(trl-compat): top_k_top_p_filtering (trl.core, removed from TRL) is not... "
            "[ppo-helpers]\nlogits = top_k_top_p_filtering(x)\n") in out
    assert any(f.anchor == "ppo-core-helpers" for f in findings)
    assert findings and not any(f.changed for f in findings)


def test_noops():
    noop(RULE, "from transformers import set_seed\nset_seed(0)\n")
    noop(RULE, "from trl import create_reference_model\nref = create_reference_model(model)\n")
    noop(RULE, "def set_seed(s):\n    pass\n\n\nset_seed(1)\n")


def test_core_helpers_imported_through_ppo_trainer_are_trl_core_helpers():
    out, findings = run(RULE, """\
        from trl.trainer.ppo_trainer import PPODecorators, logprobs_from_logits

        class T:
            @PPODecorators.empty_cuda_cache()
            def f(self, logits, labels):
                return logprobs_from_logits(logits, labels)
    """)
    assert "trl.trainer.ppo_trainer" not in out.replace("# TODO", "")
    assert "def logprobs_from_logits(logits, labels, gather=True):" in out
    assert "from compat.trl import PPODecorators" in out and "TODO" not in out


def test_ppo_trainer_names_that_are_not_core_helpers_are_left_alone():
    noop(RULE, """\
        from trl.trainer.ppo_trainer import PPOTrainer
        from ppo_trainer import logprobs_from_logits
        PPOTrainer, logprobs_from_logits
    """)
    noop(RULE, """\
        from trl.trainer.ppo_trainer import masked_mean
        masked_mean(1, 2)
    """)
    noop(RULE, """\
        from .trainer.ppo_trainer import logprobs_from_logits
        logprobs_from_logits(1, 2)
    """)


def test_ppo_trainer_re_exports_are_trl_core_definitions_in_every_release():
    from migrations.atlas import Atlas
    from migrations.v1_13.ppo_helpers import PPO_TRAINER_CORE

    # wherever the re-export exists (0.4 - 0.11; the PPOv2 module of 0.12+ has fewer), it is trl.core's definition;
    # 0.25's own masked_mean & co. are why those are not in the set
    atlas = Atlas.load("trl")
    seen: set[str] = set()
    for release in atlas.releases():
        for name in PPO_TRAINER_CORE:
            via = atlas.resolve(release, f"trl.trainer.ppo_trainer.{name}")
            if via is not None:
                core = atlas.resolve(release, f"trl.core.{name}")
                assert core is not None and via.qualname == core.qualname, (release, name)
                seen.add(name)
    assert seen == PPO_TRAINER_CORE


def test_statistics_helpers_and_decorators_move_to_the_compat_copies():
    """stack_dicts / stats_to_np / convert_to_scalar (gone in 0.14) and PPODecorators (0.24) -> compat.trl (copies
    of their last TRL bodies, tested against the wheels in tests/compat/test_trainer_utils_vs_trl.py)."""
    check(RULE, """\
        import trl.core
        from trl.core import stack_dicts, PPODecorators
        from trl.trainer.ppo_trainer import stats_to_np as to_np

        @PPODecorators.empty_device_cache()
        def step(batch):
            PPODecorators.optimize_device_cache = True
            return to_np(stack_dicts(batch)), trl.core.convert_to_scalar({})
    """, """\
        import trl
        from compat.trl import stack_dicts, PPODecorators, convert_to_scalar
        from compat.trl import stats_to_np as to_np

        @PPODecorators.empty_device_cache()
        def step(batch):
            PPODecorators.optimize_device_cache = True
            return to_np(stack_dicts(batch)), convert_to_scalar({})
    """)


def test_pre_0_7_4_decorators_move_to_the_compat_copy():
    """`empty_cuda_cache` / `optimize_cuda_cache` are PPODecorators' names before TRL 0.7.4 (yongzhuo/chatglm-maths's
    copy of the 0.4-era PPOTrainer). The import was dropped and marked, leaving `@PPODecorators.empty_cuda_cache()`
    a NameError when the class is defined; the compat copy keeps those members too (tested against TRL 0.7.2's
    class in tests/compat/test_trainer_utils_vs_trl.py)."""
    out, findings = run(RULE, """\
        from trl.core import PPODecorators, stack_dicts

        PPODecorators.optimize_cuda_cache = True
        stats = stack_dicts(batch)
    """)
    assert out.startswith("from compat.trl import PPODecorators, stack_dicts\n"), out
    assert "TODO" not in out and not [f for f in findings if f.severity == "manual"]


def test_compat_copy_noops():
    noop(RULE, "from compat.trl import stack_dicts, PPODecorators\nstack_dicts([])\n")
    noop(RULE, "def stack_dicts(x):\n    return x\n\n\nstack_dicts([])\n")
    noop(RULE, "from mylib.core import stack_dicts\nstack_dicts([])\n")
    noop(RULE, "from trl.trainer.ppo_trainer import masked_whiten\nmasked_whiten(1, 2)\n")
