"""Before/after cases for the TRL 1.14 removals: BCO, replay-buffer GRPO, GSPO-token, Nash-MD, PRM, XPO, trl.losses."""

from __future__ import annotations

from migrations.v1_14.removed_bco import MIGRATION as BCO
from migrations.v1_14.removed_grpo_with_replay_buffer import MIGRATION as REPLAY
from migrations.v1_14.removed_gspo_token import MIGRATION as GSPO
from migrations.v1_14.removed_nash_md import MIGRATION as NASH
from migrations.v1_14.removed_prm import MIGRATION as PRM
from migrations.v1_14.trl_losses_to_compat import MIGRATION as LOSSES
from migrations.v1_14.removed_xpo import MIGRATION as XPO
from tests.migrations.breaks._driver import check, noop, run

# -- BCO ---------------------------------------------------------------------------------------------------------


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
    """)
    assert out.startswith("# TODO(trl-compat): trl.experimental.bco was removed in TRL 1.14")
    assert "(see MIGRATION.md#removed-bco)" in out
    assert [f.severity for f in findings] == ["manual"]


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


# -- GSPO-token --------------------------------------------------------------------------------------------------


def test_gspo_token_import_and_config_value():
    check(GSPO, """\
        from trl import GRPOConfig
        from trl.experimental.gspo_token import GRPOTrainer

        args = GRPOConfig(importance_sampling_level="sequence_token", loss_type="grpo")
        GRPOTrainer(model, reward_funcs=f, args=args)
    """, """\
        from trl import GRPOConfig
        from trl import GRPOTrainer

        args = GRPOConfig(importance_sampling_level="sequence", loss_type="grpo")
        GRPOTrainer(model, reward_funcs=f, args=args)
    """)


def test_gspo_token_attribute_use_and_aliased_config():
    check(GSPO, """\
        import trl as t
        from trl.trainer.grpo_config import GRPOConfig as C
        import trl.experimental.gspo_token as gspo

        gspo.GRPOTrainer(model, args=C(importance_sampling_level='sequence_token'))
    """, """\
        import trl as t
        from trl.trainer.grpo_config import GRPOConfig as C
        import trl

        trl.GRPOTrainer(model, args=C(importance_sampling_level='sequence'))
    """)


def test_gspo_token_config_only_file():
    check(GSPO, """\
        import trl
        cfg = trl.GRPOConfig(importance_sampling_level="sequence_token")
    """, """\
        import trl
        cfg = trl.GRPOConfig(importance_sampling_level="sequence")
    """)


def test_gspo_token_noops():
    noop(GSPO, """\
        from trl import GRPOConfig
        GRPOConfig(importance_sampling_level="token")
    """)
    noop(GSPO, """\
        from mylib import GRPOConfig
        GRPOConfig(importance_sampling_level="sequence_token")
    """)
    noop(GSPO, """\
        from trl import GRPOTrainer
        GRPOTrainer(model)
    """)


# -- removed, no successor ---------------------------------------------------------------------------------------


def test_no_successor_rules_mark_imports_and_uses():
    for rule, module, name in [
        (REPLAY, "trl.experimental.grpo_with_replay_buffer", "GRPOWithReplayBufferTrainer"),
        (NASH, "trl.experimental.nash_md", "NashMDTrainer"),
        (PRM, "trl.experimental.prm", "PRMTrainer"),
        (XPO, "trl.experimental.xpo", "XPOTrainer"),
    ]:
        src = f"from {module} import {name}\n\n\ntrainer = {name}(model)\n"
        out, findings = run(rule, src)
        lines = out.splitlines()
        assert lines[0].startswith(f"# TODO(trl-compat): {module} was removed in TRL 1.14")
        assert lines[0].endswith(f"(see MIGRATION.md#{rule.anchor})")
        assert lines[1] == f"from {module} import {name}"
        assert lines[4].startswith("# TODO(trl-compat):") and lines[5] == f"trainer = {name}(model)"
        assert len(findings) == 2 and not any(f.changed for f in findings)


def test_no_successor_module_import_forms():
    out, _ = run(NASH, """\
        import trl.experimental.nash_md as nm
        from trl.experimental import nash_md
        t = nm.NashMDTrainer(model)
    """)
    assert out.count("# TODO(trl-compat): trl.experimental.nash_md was removed") == 3
    noop(XPO, "from trl.experimental.online_dpo import OnlineDPOTrainer\nxpo = 1\n")
    noop(PRM, "from trl import RewardTrainer\nprm = RewardTrainer\n")


# -- trl.losses --------------------------------------------------------------------------------------------------


def test_trl_losses_to_compat_losses():
    check(LOSSES, """\
        from trl.losses import FusedLinearDPOLoss, FusedLinearGRPOLoss as G
        import trl.losses
        from trl.losses.jsd_loss import FusedLinearJSDLoss

        a = FusedLinearDPOLoss(beta=0.1)
        b = trl.losses.FusedLinearKTOLoss()
    """, """\
        from compat.losses import FusedLinearDPOLoss, FusedLinearGRPOLoss as G
        from compat.losses import FusedLinearJSDLoss
        import compat.losses

        a = FusedLinearDPOLoss(beta=0.1)
        b = compat.losses.FusedLinearKTOLoss()
    """)


def test_trl_losses_kept_for_1_13_and_noops():
    src = "from trl.losses import FusedLinearDPOLoss\n"
    assert run(LOSSES, src, target="1.13.0")[0] == src
    assert run(LOSSES, src, target="1.14.0")[0] == "from compat.losses import FusedLinearDPOLoss\n"
    noop(LOSSES, "from torch.nn import losses\nfrom compat.losses import FusedLinearDPOLoss\n")
