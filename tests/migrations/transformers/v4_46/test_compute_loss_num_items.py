"""compute-loss-num-items: PPO-era `compute_loss` overrides of `transformers.Trainer` subclasses.

The behaviour is checked on the real Trainer of the installed transformers: a tiny model trained two steps with
gradient accumulation, the migrated subclass against a hand-written loss scaled as transformers 4.45 scaled it
(each micro-batch's loss divided by the accumulation steps, `Accelerator.backward`).
"""

from __future__ import annotations

import textwrap

import torch

from migrations.transformers.v4_46.compute_loss_num_items import MIGRATION as RULE
from tests.migrations._driver import check, noop, run

REWARD_TRAINER = """\
from transformers import Trainer


class RewardTrainer(Trainer):
    # pairwise loss of StackLLaMA's reward_modeling.py
    def compute_loss(self, model, inputs, return_outputs=False):
        rewards_j = model(input_ids=inputs["input_ids_j"])[0]
        rewards_k = model(input_ids=inputs["input_ids_k"])[0]
        loss = -torch.nn.functional.logsigmoid(rewards_j - rewards_k).mean()
        if return_outputs:
            return loss, {"rewards_j": rewards_j, "rewards_k": rewards_k}
        return loss
"""


def test_the_parameter_and_the_loss_scaling_of_4_45():
    check(RULE, REWARD_TRAINER, """\
        from transformers import Trainer
        from compat.trl import loss_kwargs_ignored


        class RewardTrainer(Trainer):
            # trl-compat: compute_loss ignores num_items_in_batch (transformers 4.46+): 4.45's loss scaling
            model_accepts_loss_kwargs = loss_kwargs_ignored

            # pairwise loss of StackLLaMA's reward_modeling.py
            def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
                rewards_j = model(input_ids=inputs["input_ids_j"])[0]
                rewards_k = model(input_ids=inputs["input_ids_k"])[0]
                loss = -torch.nn.functional.logsigmoid(rewards_j - rewards_k).mean()
                if return_outputs:
                    return loss, {"rewards_j": rewards_j, "rewards_k": rewards_k}
                return loss
    """)


def test_docstrings_star_args_and_what_is_left_alone():
    out, _ = run(RULE, '''\
        import transformers


        class Base(transformers.Seq2SeqTrainer):
            """A trainer."""

            def compute_loss(self, model, inputs, *args):
                return model(**inputs).loss


        class Child(Base):
            model_accepts_loss_kwargs = False

            def compute_loss(self, model, inputs, return_outputs=False):
                return super().compute_loss(model, inputs)
    ''')
    assert 'class Base(transformers.Seq2SeqTrainer):\n    """A trainer."""\n    # trl-compat' in out, out
    assert "def compute_loss(self, model, inputs, *args, num_items_in_batch=None):" in out
    assert "def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):" in out
    assert out.count("= loss_kwargs_ignored") == 1  # Child sets the attribute itself
    noop(RULE, """\
        from transformers import Trainer
        from trl import DPOTrainer

        class A(Trainer):
            def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
                pass

        class B(Trainer):
            def compute_loss(self, model, inputs, **kwargs):
                pass

        class C(DPOTrainer):  # TRL's trainers: trainer-subclass-internals marks them
            def compute_loss(self, model, inputs, return_outputs=False):
                pass

        class D:
            def compute_loss(self, model, inputs, return_outputs=False):
                pass
    """)


def test_the_signature_keeps_its_layout():
    """One parameter per line with a trailing comma stays so (POVID's LLaVA DPOTrainer), and the attribute after a
    docstring followed by a blank line adds no second blank line (pycodestyle E303)."""
    check(RULE, '''\
        from transformers import Trainer


        class DPOTrainer(Trainer):
            """A copy of TRL's DPOTrainer."""

            def compute_loss(
                self,
                model,
                inputs,
                return_outputs=False,
            ) -> float:
                return 0.0
    ''', '''\
        from transformers import Trainer
        from compat.trl import loss_kwargs_ignored


        class DPOTrainer(Trainer):
            """A copy of TRL's DPOTrainer."""
            # trl-compat: compute_loss ignores num_items_in_batch (transformers 4.46+): 4.45's loss scaling
            model_accepts_loss_kwargs = loss_kwargs_ignored

            def compute_loss(
                self,
                model,
                inputs,
                return_outputs=False,
                num_items_in_batch=None,
            ) -> float:
                return 0.0
    ''')


def _gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    return GPT2LMHeadModel(GPT2Config(vocab_size=32, n_positions=16, n_embd=8, n_layer=1, n_head=2, resid_pdrop=0.0,
                                      embd_pdrop=0.0, attn_pdrop=0.0))


def _one_step(tmp_path, cls, data):
    """One optimizer step of `cls` over the four samples (two micro-batches of two, accumulated), plain SGD."""
    from transformers import TrainingArguments

    model = _gpt2()
    args = TrainingArguments(output_dir=str(tmp_path), per_device_train_batch_size=2, gradient_accumulation_steps=2,
                             max_steps=1, learning_rate=0.1, lr_scheduler_type="constant", optim="sgd",
                             weight_decay=0.0, max_grad_norm=0.0, report_to=[], use_cpu=True, save_strategy="no")
    cls(model=model, args=args, train_dataset=data).train()
    return model


def test_the_migrated_trainer_trains_as_4_45_did(tmp_path):
    """A custom loss on batches with `labels` (the case 4.46+ counts items for) on GPT-2 (its forward takes
    `**kwargs`, so `model_accepts_loss_kwargs` would be True). The oracle is written out: 4.45 divided each of the
    two micro-batch losses (means over 2 x 7 predicted tokens) by the accumulation steps, so one step is SGD on the
    mean loss over all four samples. The migrated class matches it; the parameter alone (the control) takes a step
    twice as large: the loss scaling the rule keeps is needed."""
    source = textwrap.dedent("""\
        import torch
        from transformers import Trainer


        class MeanLoss(Trainer):
            def compute_loss(self, model, inputs, return_outputs=False):
                out = model(input_ids=inputs["input_ids"], labels=inputs["labels"])
                return (out.loss, out) if return_outputs else out.loss
    """)
    migrated, _ = run(RULE, source, dedent=False)
    assert "model_accepts_loss_kwargs = loss_kwargs_ignored" in migrated
    generator = torch.Generator().manual_seed(1)
    data = [{"input_ids": torch.randint(0, 32, (8,), generator=generator),
             "labels": torch.randint(0, 32, (8,), generator=generator)} for _ in range(4)]

    migrated_cls = {}
    exec(compile(migrated, "migrated.py", "exec"), migrated_cls)  # noqa: S102 - the rule's output, run as written
    control_cls = {}
    exec(compile(source.replace("return_outputs=False)", "return_outputs=False, num_items_in_batch=None)"),  # noqa: S102
                 "control.py", "exec"), control_cls)
    trained = _one_step(tmp_path / "a", migrated_cls["MeanLoss"], data).state_dict()
    control = _one_step(tmp_path / "b", control_cls["MeanLoss"], data).state_dict()

    oracle = _gpt2()
    start = {k: v.detach().clone() for k, v in oracle.state_dict().items()}
    loss = oracle(input_ids=torch.stack([d["input_ids"] for d in data]),
                  labels=torch.stack([d["labels"] for d in data])).loss
    loss.backward()
    grads = {n: p.grad for n, p in oracle.named_parameters()}
    for name, grad in grads.items():
        assert torch.allclose(trained[name], start[name] - 0.1 * grad, atol=1e-6), name
        assert torch.allclose(control[name], start[name] - 0.2 * grad, atol=1e-6), name
