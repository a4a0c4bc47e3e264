"""Before/after and no-op cases for `removed-trainer-utils`."""

from __future__ import annotations

import os

import pytest

from migrations.v0_29 import removed_trainer_utils as mod
from migrations.v0_29.removed_trainer_utils import MIGRATION as RULE
from tests.migrations._driver import check, noop, run


def test_cap_exp_moves_and_others_are_marked():
    out, _ = run(RULE, """\
        from trl.trainer.utils import cap_exp, RunningMoments
        from trl import FDivergenceType

        x = cap_exp(logits)
        rm = RunningMoments(accelerator)
        kind = FDivergenceType.REVERSE_KL
    """)
    assert "from compat.trl import cap_exp, RunningMoments" in out
    assert "rm = RunningMoments(accelerator)" in out and "RunningMoments was removed" not in out
    assert out.count("FDivergenceType removed in TRL 0.29") == 2


def test_atlas_derived_helpers():
    out, findings = run(RULE, """\
        from trl.trainer.utils import first_true_indices, get_reward, flush_right, pad

        idx = first_true_indices(mask)
        mask = flush_right(mask)
    """)
    assert "from trl.experimental.utils import first_true_indices, get_reward" in out
    assert "from trl.trainer.utils import flush_right, pad" in out
    assert "# TODO(trl-compat): trl.trainer.utils.flush_right is gone" in out
    assert any("trl.trainer.utils.flush_right is gone (TRL 0.27 - 1.0)" in f.message for f in findings)


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
    for name in (*mod._NO_SUCCESSOR, *mod._CHANGED, *mod._COPIED, *mod._HELPER_COPIES):
        assert not hasattr(utils, name), name


def test_generation_helpers_move_to_the_compat_copies():
    check(RULE, """\
        from trl.trainer.utils import (
            batch_generation,
            first_true_indices,
            forward,
            print_rich_table,
            truncate_response,
            truncate_right,
            log_table_to_comet_experiment,
        )
    """, """\
        from trl.trainer.utils import log_table_to_comet_experiment
        from compat.trl import batch_generation, forward, print_rich_table, truncate_response, truncate_right
        from trl.experimental.utils import first_true_indices
    """)


def test_module_attribute_use_and_aliases():
    out, _ = run(RULE, """\
        import trl.trainer.utils as U
        from trl.trainer.utils import PeftSavingCallback as Saver

        cbs = [Saver()]
        out = U.batch_generation(model, q, 4, 0, cfg)
    """)
    assert "from compat.trl import PeftSavingCallback as Saver" in out
    assert "TODO(trl-compat)" not in out
    assert "batch_generation(model, q, 4, 0, cfg)" in out and "U.batch_generation" not in out


def test_fdivergence_constants_moves_and_the_enum_stays_marked():
    out, _ = run(RULE, """\
        from trl.trainer.dpo_config import DPOConfig, FDivergenceConstants, FDivergenceType

        key = FDivergenceConstants.ALPHA_DIVERGENCE_COEF_KEY
        if kind == FDivergenceType.ALPHA_DIVERGENCE:
            pass
    """)
    assert "from compat.trl import FDivergenceConstants\n" in out
    assert "from trl.trainer.dpo_config import DPOConfig, FDivergenceType\n" in out
    assert "FDivergenceConstants removed" not in out
    assert out.count("FDivergenceType removed in TRL 0.29") == 2


def test_copy_noops():
    noop(RULE, """\
        from compat.trl import batch_generation, PeftSavingCallback, FDivergenceConstants
        batch_generation(model, q, 4, 0, cfg)
    """)
    noop(RULE, """\
        from .utils import batch_generation, forward, PeftSavingCallback

        def truncate_response(a, b, c):
            return forward(a, b, c)
    """)
    noop(RULE, """\
        from my_trl.trainer.utils import batch_generation
        class FDivergenceConstants:
            ALPHA_DIVERGENCE_COEF_KEY = "k"
    """)



def test_dpo_collator_moves_to_the_compat_copy_that_keeps_label_pad_token_id():
    check(RULE, """\
        from trl.trainer.utils import DPODataCollatorWithPadding, pad_to_length

        collator = DPODataCollatorWithPadding(pad_token_id=0, label_pad_token_id=args.label_pad_token_id)
    """, """\
        from compat.trl import DPODataCollatorWithPadding
        from trl.experimental.utils import pad_to_length

        collator = DPODataCollatorWithPadding(pad_token_id=0, label_pad_token_id=args.label_pad_token_id)
    """)
    noop(RULE, """\
        from trl.experimental.utils import DPODataCollatorWithPadding
        collator = DPODataCollatorWithPadding(pad_token_id=0)
    """)


def test_tagging_helper_moves_to_the_compat_copy():
    check(RULE, """\
        from trl.trainer.utils import trl_sanitze_kwargs_for_tagging

        kwargs = trl_sanitze_kwargs_for_tagging(model=self.model, tag_names=self._tag_names, kwargs=kwargs)
    """, """\
        from compat.trl import trl_sanitze_kwargs_for_tagging

        kwargs = trl_sanitze_kwargs_for_tagging(model=self.model, tag_names=self._tag_names, kwargs=kwargs)
    """)


def test_fdivergence_values_become_their_strings():
    check(RULE, """\
        from trl.trainer.dpo_config import DPOConfig, FDivergenceConstants, FDivergenceType

        if self.f_divergence_type == FDivergenceType.ALPHA_DIVERGENCE.value:
            alpha = FDivergenceConstants.ALPHA_DIVERGENCE_COEF_DEFAULT
        elif self.f_divergence_type == FDivergenceType.JS_DIVERGENCE.value:
            pass
    """, """\
        from trl.trainer.dpo_config import DPOConfig
        from compat.trl import FDivergenceConstants

        if self.f_divergence_type == "alpha_divergence":
            alpha = FDivergenceConstants.ALPHA_DIVERGENCE_COEF_DEFAULT
        elif self.f_divergence_type == "js_divergence":
            pass
    """)
    check(RULE, """\
        import trl

        kind = trl.FDivergenceType.REVERSE_KL.value
    """, """\
        import trl

        kind = "reverse_kl"
    """)


def test_fdivergence_enum_used_otherwise_stays_marked_everywhere():
    out, _ = run(RULE, """\
        from trl import FDivergenceType

        a = FDivergenceType.REVERSE_KL.value
        b = FDivergenceType.REVERSE_KL
    """)
    assert 'a = FDivergenceType.REVERSE_KL.value' in out and "from trl import FDivergenceType" in out
    assert out.count("FDivergenceType removed in TRL 0.29") == 3


def test_fdivergence_noops():
    noop(RULE, """\
        from enum import Enum

        class FDivergenceType(Enum):
            REVERSE_KL = "rkl"

        kind = FDivergenceType.REVERSE_KL.value
    """)
    noop(RULE, """\
        from .dpo_config import FDivergenceType
        kind = FDivergenceType.REVERSE_KL.value
    """)


def test_fdivergence_values_match_the_wheels():
    import ast
    import zipfile
    from pathlib import Path

    from migrations.v0_29.removed_trainer_utils import FDIV_VALUES

    wheels = Path(os.environ.get("TRL_COMPAT_WHEELS", "/work/cache/wheels"))
    for version in ("0.9.6", "0.12.2", "0.20.0", "0.28.0"):
        wheel = wheels / f"trl-{version}-py3-none-any.whl"
        if not wheel.is_file():
            pytest.skip(f"no TRL {version} wheel")
        tree = ast.parse(zipfile.ZipFile(wheel).read("trl/trainer/dpo_config.py").decode())
        enum = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "FDivergenceType")
        members = {t.targets[0].id: t.value.value for t in enum.body if isinstance(t, ast.Assign)}
        assert members == FDIV_VALUES, version


def test_ppo_kl_controllers_and_running_moments_move_to_the_compat_copies():
    """The PPO (v1) KL controllers (gone in 0.14; also re-exported by `trl.trainer` and `trl.trainer.ppo_trainer`),
    RunningMoments and get_global_statistics (0.29) -> compat.trl (the last TRL bodies, tested against the wheels)."""
    check(RULE, """\
        from trl.trainer import AdaptiveKLController, FixedKLController as Fixed
        from trl.trainer.ppo_trainer import RunningMoments
        from trl.trainer.utils import get_global_statistics
        import trl

        kl = AdaptiveKLController(0.2, 6, 10000) if adaptive else Fixed(0.2)
        other = trl.trainer.utils.FixedKLController(0.1)
        mean, var, n = get_global_statistics(accelerator, xs)
    """, """\
        from compat.trl import AdaptiveKLController, FixedKLController as Fixed
        from compat.trl import RunningMoments
        from compat.trl import get_global_statistics
        import trl
        import compat.trl

        kl = AdaptiveKLController(0.2, 6, 10000) if adaptive else Fixed(0.2)
        other = compat.trl.FixedKLController(0.1)
        mean, var, n = get_global_statistics(accelerator, xs)
    """)


def test_ppo_copies_noops():
    noop(RULE, "from compat.trl import AdaptiveKLController\nAdaptiveKLController(1, 2, 3)\n")
    noop(RULE, "from rlhf.trainer import AdaptiveKLController\nAdaptiveKLController(1, 2, 3)\n")
    noop(RULE, "class AdaptiveKLController:\n    pass\n\n\nAdaptiveKLController()\n")
    noop(RULE, "from .trainer import AdaptiveKLController\nAdaptiveKLController(1, 2, 3)\n")


def test_the_ppo_era_base_trainer_moves_to_the_compat_copy():
    """`trl.trainer.BaseTrainer` (trl.trainer.base, 0.4 - 0.13: the PPO-era base) -> compat.trl; TRL 0.24 - 0.29's
    `trl.trainer.base_trainer.BaseTrainer` is another class (a transformers.Trainer) and is not moved."""
    check(RULE, """\
        from trl.trainer import BaseTrainer
        from trl.trainer.base import BaseTrainer as Base


        class MyPPO(BaseTrainer):
            pass
    """, """\
        from compat.trl import BaseTrainer
        from compat.trl import BaseTrainer as Base


        class MyPPO(BaseTrainer):
            pass
    """)
    noop(RULE, "from trl.trainer.base_trainer import BaseTrainer\n\n\nclass T(BaseTrainer):\n    pass\n")


def test_exact_div_and_compute_accuracy_move_to_the_compat_copies():
    """optimum-habana's PPOConfig (TRL 0.8's five-argument exact_div) and modpo's DPO trainer (compute_accuracy)."""
    check(RULE, """\
        from trl import PPOConfig
        from trl.trainer.utils import exact_div

        exact_div(self.batch_size, self.backward_batch_size, "`batch_size`", "`mini_batch_size`", "must divide")
    """, """\
        from trl import PPOConfig
        from compat.trl import exact_div

        exact_div(self.batch_size, self.backward_batch_size, "`batch_size`", "`mini_batch_size`", "must divide")
    """)
    check(RULE, """\
        from trl.trainer.utils import PeftSavingCallback, compute_accuracy, disable_dropout_in_model

        compute_metrics = compute_accuracy
    """, """\
        from trl.trainer.utils import disable_dropout_in_model
        from compat.trl import PeftSavingCallback, compute_accuracy

        compute_metrics = compute_accuracy
    """)


def test_exact_div_and_compute_accuracy_every_module_that_exported_them():
    """The atlas: compute_accuracy through trl.trainer and trl.trainer.reward_trainer too, exact_div through the PPO /
    RLOO modules; aliases and attribute uses."""
    check(RULE, """\
        from trl.trainer import compute_accuracy as accuracy
        from trl.trainer.reward_trainer import compute_accuracy
        from trl.trainer.ppo_config import exact_div
        from trl.trainer.rloo_trainer import exact_div as div
        import trl

        metrics = [accuracy, compute_accuracy, trl.trainer.utils.compute_accuracy]
        n = exact_div(a, b) + div(a, b, "c")
    """, """\
        from compat.trl import compute_accuracy as accuracy
        from compat.trl import compute_accuracy
        from compat.trl import exact_div
        from compat.trl import exact_div as div
        import trl
        import compat.trl

        metrics = [accuracy, compute_accuracy, compat.trl.compute_accuracy]
        n = exact_div(a, b) + div(a, b, "c")
    """)


def test_exact_div_and_compute_accuracy_noops():
    noop(RULE, "from compat.trl import exact_div, compute_accuracy\nexact_div(4, 2)\n")
    noop(RULE, "from .utils import exact_div, compute_accuracy\nexact_div(4, 2)\n")
    noop(RULE, "from my_trl.trainer.utils import compute_accuracy\nm = compute_accuracy\n")
    noop(RULE, """\
        def exact_div(a, b):
            return a // b


        def compute_accuracy(eval_pred):
            return {}


        n = exact_div(4, 2)
        m = compute_accuracy
    """)
    noop(RULE, """\
        import trl

        def f(trl):
            return trl.trainer.utils.exact_div(4, 2)
    """)


def test_reward_collator_moves_to_the_compat_copy():
    """modpo's and text-to-sql-GDP's reward trainers (TRL 0.7 - 0.8): from trl.trainer.utils and reward_trainer."""
    check(RULE, """\
        from trl.trainer.utils import RewardDataCollatorWithPadding, disable_dropout_in_model
        from trl.trainer.reward_trainer import RewardDataCollatorWithPadding as Collator

        collator = RewardDataCollatorWithPadding(tokenizer, max_length=512)
        other = Collator(tokenizer)
    """, """\
        from trl.trainer.utils import disable_dropout_in_model
        from compat.trl import RewardDataCollatorWithPadding
        from compat.trl import RewardDataCollatorWithPadding as Collator

        collator = RewardDataCollatorWithPadding(tokenizer, max_length=512)
        other = Collator(tokenizer)
    """)
    # a local class of that name is not TRL's
    noop(RULE, """\
        from dataclasses import dataclass
        from trl.trainer.utils import disable_dropout_in_model

        @dataclass
        class RewardDataCollatorWithPadding:
            tokenizer: object
    """)


def test_invalid_logprob_moves_from_every_module_that_had_it():
    """The atlas's exporters of `INVALID_LOGPROB` (0.9.2 - 1.12.0) -> the `compat.trl` constant, on 1.16 and 1.13
    (neither has it); `exact_div` through `trl.experimental.ppo.ppo_trainer` (0.26 - 1.12) likewise."""
    for target in ("1.16.0", "1.13.0"):
        out, findings = run(RULE, """\
            from trl.trainer.rloo_trainer import INVALID_LOGPROB
            from trl.experimental.ppo.ppo_trainer import INVALID_LOGPROB as BAD, exact_div

            logprobs = torch.masked_fill(logprobs, padding_mask, INVALID_LOGPROB)
            assert BAD == exact_div(2, 2)
        """, target=target)
        assert "from compat.trl import INVALID_LOGPROB\n" in out
        assert "from compat.trl import INVALID_LOGPROB as BAD, exact_div\n" in out
        assert "TODO(trl-compat)" not in out and "from trl" not in out


def test_online_trainer_state_moves_to_the_compat_copy():
    """aligning-to-what's and C-Optim's copies of TRL's PPOv2 / RLOO trainers build `OnlineTrainerState(...)` and
    subclass `OnPolicyConfig`: every exporter of the atlas moves to compat.trl, unmarked, on 1.16 and 1.13; a local
    class of that name stays."""
    for target in ("1.16.0", "1.13.0"):
        out, findings = run(RULE, """\
            from trl.trainer.utils import OnPolicyConfig, OnlineTrainerState, disable_dropout_in_model
            from trl.trainer.rloo_trainer import OnlineTrainerState as State

            state = OnlineTrainerState(is_local_process_zero=True, is_world_process_zero=True)
            other = State()
        """, target=target)
        assert "from trl.trainer.utils import disable_dropout_in_model\n" in out
        assert "from compat.trl import OnPolicyConfig, OnlineTrainerState\n" in out
        assert "from compat.trl import OnlineTrainerState as State\n" in out
        assert "TODO(trl-compat)" not in out
        assert not [f for f in findings if f.severity == "manual"]
    noop(RULE, """\
        from dataclasses import dataclass
        from transformers import TrainerState

        @dataclass
        class OnlineTrainerState(TrainerState):
            episode: int = 0
    """)


def test_neftune_hook_moves_to_the_compat_copy():
    """A custom SFT trainer of TRL 0.9 (plan-gen's custom_sft_trainer.py) registers TRL's NEFTune hook itself."""
    out, findings = run(RULE, """\
        from trl.trainer.utils import neftune_post_forward_hook
        from trl.trainer.sft_trainer import neftune_post_forward_hook as hook

        handle = embeddings.register_forward_hook(neftune_post_forward_hook)
    """)
    assert "from compat.trl import neftune_post_forward_hook\n" in out
    assert "from compat.trl import neftune_post_forward_hook as hook\n" in out
    assert "TODO(trl-compat)" not in out and not [f for f in findings if f.severity == "manual"]


def test_invalid_logprob_tables_are_the_atlas_exporters():
    from migrations.atlas import Atlas

    atlas = Atlas.load("trl")
    for name in ("INVALID_LOGPROB", "exact_div", "OnlineTrainerState", "neftune_post_forward_hook", "OnPolicyConfig"):
        exporters = {m for v in atlas.releases() for m in atlas.modules(v) if atlas.has(v, f"{m}.{name}")}
        assert set(mod._HELPER_COPIES[name][1]) == exporters, name
        assert not any(atlas.has(t, f"{m}.{name}") for t in ("1.13.0", "1.16.0") for m in exporters)


def test_compat_invalid_logprob_is_every_wheels_constant():
    """The value TRL's own modules define, read from the wheels where they are cached (`$TRL_COMPAT_WHEELS`)."""
    import ast
    import zipfile
    from pathlib import Path

    import compat.trl

    wheels = Path(os.environ.get("TRL_COMPAT_WHEELS", "/work/cache/wheels"))
    found = {}
    for version, path in (("0.9.6", "trl/trainer/rloo_trainer.py"), ("0.11.4", "trl/trainer/ppov2_trainer.py"),
                          ("0.21.0", "trl/trainer/ppo_trainer.py"), ("1.12.0", "trl/experimental/ppo/ppo_trainer.py")):
        wheel = wheels / f"trl-{version}-py3-none-any.whl"
        if not wheel.is_file():
            continue
        for node in ast.parse(zipfile.ZipFile(wheel).read(path)).body:
            if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["INVALID_LOGPROB"]:
                found[version] = ast.literal_eval(node.value)
    if not found:
        pytest.skip(f"no TRL wheel at {wheels}")
    assert set(found.values()) == {compat.trl.INVALID_LOGPROB} == {1.0}, found


def test_decode_and_strip_padding_moves_to_the_compat_copy():
    """HahmDY/reward-modeling-develop's custom reward trainers (TRL 0.19): the sample printer, gone in 0.25."""
    check(RULE, """\
        from trl.trainer.utils import decode_and_strip_padding, print_rich_table

        texts = decode_and_strip_padding(inputs["input_ids_chosen"], self.processing_class)
    """, """\
        from compat.trl import decode_and_strip_padding, print_rich_table

        texts = decode_and_strip_padding(inputs["input_ids_chosen"], self.processing_class)
    """)


def test_the_tokenizing_dpo_collator_of_trl_0_7_stays_marked():
    """luka-group/mDPO and vlf-silkie/VLFeedback (`trl==0.7.2`) subclass TRL 0.7's DPODataCollatorWithPadding, built
    from the tokenizer with max_length= / max_prompt_length= and calling `self.collate`: 0.8's padding-only class
    (the compat copy) has none of that, so the import stays, marked; the 0.8+ use still moves."""
    src = """\
        from trl.trainer.utils import DPODataCollatorWithPadding


        class QwenDPODataCollator(DPODataCollatorWithPadding):
            def __call__(self, features):
                return self.collate([self.tokenize_batch_element(**f) for f in features])


        collator = QwenDPODataCollator(tokenizer, max_length=8192, max_prompt_length=4096, padding_value=0)
    """
    out, findings = run(RULE, src)
    assert "from trl.trainer.utils import DPODataCollatorWithPadding" in out and "compat.trl" not in out
    assert any("TRL 0.7's API" in f.message for f in findings)
    out, _ = run(RULE, src.replace("max_length=8192, max_prompt_length=4096, padding_value=0", "pad_token_id=0")
                 .replace("return self.collate([self.tokenize_batch_element(**f) for f in features])",
                          "return super().__call__(features)").replace("(tokenizer, ", "("))
    assert "from compat.trl import DPODataCollatorWithPadding" in out
