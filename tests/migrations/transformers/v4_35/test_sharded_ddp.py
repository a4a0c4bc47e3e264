"""sharded-ddp: LLaVA's `if self.sharded_ddp == ShardedDDPOption.SIMPLE:` in its Trainer subclass (POVID's copy)."""

from __future__ import annotations

from migrations.transformers.v4_35.sharded_ddp import MIGRATION as RULE
from tests.migrations._driver import check, noop

LLAVA = """\
import torch
from transformers import Trainer
from transformers.trainer import (
    is_sagemaker_mp_enabled,
    get_parameter_names,
    has_length,
    ALL_LAYERNORM_LAYERS,
    ShardedDDPOption,
    logger,
)


class LLaVATrainer(Trainer):
    def create_optimizer(self):
        if is_sagemaker_mp_enabled():
            return super().create_optimizer()
        if self.sharded_ddp == ShardedDDPOption.SIMPLE:
            return super().create_optimizer()

        opt_model = self.model
        if self.optimizer is None:
            optimizer_cls, optimizer_kwargs = Trainer.get_optimizer_cls_and_kwargs(self.args)

            # fairscale's optimizer state sharding
            if self.sharded_ddp == ShardedDDPOption.SIMPLE:
                self.optimizer = OSS(params=groups, optim=optimizer_cls, **optimizer_kwargs)
            else:
                self.optimizer = optimizer_cls(groups, **optimizer_kwargs)
                if optimizer_cls.__name__ == "Adam8bit":
                    logger.info("bnb")
        return self.optimizer
"""


def test_llava_trainer_takes_the_path_4_34_took_with_the_option_unset():
    check(RULE, LLAVA, """\
        import torch
        from transformers import Trainer
        from transformers.trainer import (
            is_sagemaker_mp_enabled,
            get_parameter_names,
            has_length,
            ALL_LAYERNORM_LAYERS,
            logger,
        )


        class LLaVATrainer(Trainer):
            def create_optimizer(self):
                if is_sagemaker_mp_enabled():
                    return super().create_optimizer()

                opt_model = self.model
                if self.optimizer is None:
                    optimizer_cls, optimizer_kwargs = Trainer.get_optimizer_cls_and_kwargs(self.args)

                    # fairscale's optimizer state sharding
                    self.optimizer = optimizer_cls(groups, **optimizer_kwargs)
                    if optimizer_cls.__name__ == "Adam8bit":
                        logger.info("bnb")
                return self.optimizer
    """, stack={"transformers": "4.56.2"})


def test_elif_chains_and_an_only_statement():
    check(RULE, """\
        from transformers import Trainer
        from transformers.trainer_utils import ShardedDDPOption

        class T(Trainer):
            def save(self):
                if self.args.fsdp:
                    a()
                elif self.sharded_ddp is ShardedDDPOption.ZERO_DP_2:
                    b()
                else:
                    c()

            def only(self):
                if self.sharded_ddp == ShardedDDPOption.SIMPLE:
                    d()
    """, """\
        from transformers import Trainer

        class T(Trainer):
            def save(self):
                if self.args.fsdp:
                    a()
                else:
                    c()

            def only(self):
                pass
    """)


def test_left_alone():
    # a class that sets its own sharded_ddp (a copy of transformers' Trainer), a class not on Trainer, another test
    noop(RULE, """\
        from transformers import Trainer
        from transformers.trainer import ShardedDDPOption

        class Copy(Trainer):
            def __init__(self, args):
                self.sharded_ddp = None
                if ShardedDDPOption.SIMPLE in args.sharded_ddp:
                    self.sharded_ddp = ShardedDDPOption.SIMPLE

            def step(self):
                if self.sharded_ddp == ShardedDDPOption.SIMPLE:
                    a()

        class Other:
            def step(self):
                if self.sharded_ddp == ShardedDDPOption.SIMPLE:
                    a()

        class T(Trainer):
            def step(self):
                if self.sharded_ddp == ShardedDDPOption.SIMPLE and ready:
                    a()
    """)


def test_a_seq2seq_trainer_subclass_through_a_local_base():
    """`Seq2SeqTrainer` derives from `Trainer` (4.34.1's `trainer_seq2seq.py`): its subclasses had the attribute too."""
    check(RULE, """\
        from transformers import Seq2SeqTrainer
        from transformers.trainer import ShardedDDPOption


        class Base(Seq2SeqTrainer):
            pass


        class Child(Base):
            def create_optimizer(self):
                if self.sharded_ddp == ShardedDDPOption.SIMPLE:
                    return None
                return super().create_optimizer()
    """, """\
        from transformers import Seq2SeqTrainer


        class Base(Seq2SeqTrainer):
            pass


        class Child(Base):
            def create_optimizer(self):
                return super().create_optimizer()
    """)
