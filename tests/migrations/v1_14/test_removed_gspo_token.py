"""`removed-gspo-token`: before/after and no-op cases."""

from __future__ import annotations

from migrations.v1_14.removed_gspo_token import MIGRATION as GSPO
from tests.migrations._driver import check, noop


def test_gspo_token_import_and_config_value():
    check(GSPO, """\
        from trl import GRPOConfig
        from trl.experimental.gspo_token import GRPOTrainer

        args = GRPOConfig(importance_sampling_level="sequence_token", loss_type="grpo")
        GRPOTrainer(model, reward_funcs=f, args=args)
    """, """\
        from trl import GRPOConfig, GRPOTrainer

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
