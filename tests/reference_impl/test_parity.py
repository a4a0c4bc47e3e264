"""Parity with TRL 1.16 (the installed wheel is the oracle): same tiny model, seed, data and batch; first-step loss
and gradient norm equal within 1e-4 (fp32).

Two kinds of checks:
- end to end: both trainers `train()` one optimizer step from the same dataset; the logged `loss` and `grad_norm`
  (clipping disabled) must match - this covers dataset processing, collation, sampling and the loss;
- variant sweeps: both trainers prepare their own first batch (asserted identical where the layout is shared), then
  every loss variant is evaluated on it with one forward/backward (`compute_loss`), comparing loss and grad norm.
Online trainers get fixed completions (`_trainer_helpers.fixed_completions`) on both sides, so the comparison is
deterministic: ours through `_generate_completions`, TRL's through its `_generate_single_turn`/`_generate`.
"""

from __future__ import annotations

import pytest

from . import _trainer_helpers as H

pytestmark = [pytest.mark.slow, pytest.mark.trl]


def _assert_same_step(ours: dict, theirs: dict, what: str, metrics: tuple[str, ...] = ()) -> None:
    H.assert_close(ours["loss"], theirs["loss"], what=f"{what} loss")
    H.assert_close(ours["grad_norm"], theirs["grad_norm"], what=f"{what} grad_norm")
    for name in metrics:
        H.assert_close(ours[name], theirs[name], tol=1e-4, what=f"{what} {name}")
    missing = {k for k in theirs if k not in ours and k not in ("step_time", "aux_loss")}
    assert not missing, f"{what}: TRL logs metrics we do not: {sorted(missing)}"


def _with_reference(trainer, ref_model):
    """Give our online trainer an explicit reference (TRL reloads it from the policy's path)."""
    from reference_impl.trainers import _model

    _model.add_engine_head(ref_model)
    ref_model.requires_grad_(False)
    trainer.ref_model = trainer.accelerator.prepare_model(ref_model.eval(), evaluation_mode=True)
    return trainer


# ------------------------------------------------------------------------------------------------------------ SFT
@pytest.mark.parametrize("case", ["lm", "prompt_completion_conversational", "dft"])
def test_sft_parity(case: str, tmp_path) -> None:
    """Oracle: trl.SFTTrainer.compute_loss (TRL 1.16 fused LM head), one training step."""
    trl = H.trl_1_16()
    from reference_impl import SFTConfig, SFTTrainer

    ds = H.lm_dataset() if case == "lm" else H.prompt_completion_dataset(conversational=case != "dft")
    kw = H.config_kwargs(tmp_path, loss_type="dft" if case == "dft" else "nll")
    ours = H.first_log(SFTTrainer(H.model(), args=SFTConfig(**kw), train_dataset=ds,
                                  processing_class=H.tokenizer("right")))
    theirs = H.first_log(trl.SFTTrainer(H.model(), args=trl.SFTConfig(**kw), train_dataset=ds,
                                        processing_class=H.tokenizer("right")))
    _assert_same_step(ours, theirs, f"SFT {case}", ("entropy", "mean_token_accuracy", "num_tokens"))


# ------------------------------------------------------------------------------------------------------------ DPO
DPO_VARIANTS = [
    ({"loss_type": ["sigmoid"]}),
    ({"loss_type": ["hinge"]}),
    ({"loss_type": ["ipo"]}),
    ({"loss_type": ["exo_pair"], "label_smoothing": 0.1}),
    ({"loss_type": ["nca_pair"]}),
    ({"loss_type": ["robust"], "label_smoothing": 0.1}),
    ({"loss_type": ["bco_pair"]}),
    ({"loss_type": ["sppo_hard"]}),
    ({"loss_type": ["aot"]}),
    ({"loss_type": ["aot_unpaired"]}),
    ({"loss_type": ["apo_zero"]}),
    ({"loss_type": ["apo_down"]}),
    ({"loss_type": ["discopop"]}),
    ({"loss_type": ["sft"]}),
    ({"loss_type": ["sigmoid_norm"]}),
    ({"loss_type": ["sigmoid", "sft"], "loss_weights": [1.0, 0.5]}),
    ({"loss_type": ["sigmoid"], "f_divergence_type": "js_divergence"}),
    ({"loss_type": ["sigmoid"], "f_divergence_type": "alpha_divergence", "f_alpha_divergence_coef": 0.3}),
    ({"loss_type": ["sigmoid"], "ld_alpha": 0.5}),
]


def test_dpo_parity_end_to_end(tmp_path) -> None:
    """Oracle: trl.DPOTrainer (TRL 1.16), one training step, conversational data, separate reference model."""
    trl = H.trl_1_16()
    from reference_impl import DPOConfig, DPOTrainer

    ds = H.preference_dataset(conversational=True)
    kw = H.config_kwargs(tmp_path, max_length=24)
    ours = H.first_log(DPOTrainer(H.model(), ref_model=H.model(seed=1), args=DPOConfig(**kw), train_dataset=ds,
                                  processing_class=H.tokenizer("right")))
    theirs = H.first_log(trl.DPOTrainer(H.model(), ref_model=H.model(seed=1), args=trl.DPOConfig(**kw),
                                        train_dataset=ds, processing_class=H.tokenizer("right")))
    _assert_same_step(ours, theirs, "DPO", ("rewards/margins", "logps/chosen", "logits/chosen"))


def test_dpo_parity_every_loss_type(tmp_path) -> None:
    """Oracle: trl.DPOTrainer.compute_loss (TRL 1.16) for all 15 loss types, a combined loss, f-divergences and
    LD-DPO, on the same collated batch."""
    import torch

    trl = H.trl_1_16()
    from reference_impl import DPOConfig, DPOTrainer

    ds = H.preference_dataset()
    kw = H.config_kwargs(tmp_path, label_smoothing=0.1)
    ours = DPOTrainer(H.model(), ref_model=H.model(seed=1), args=DPOConfig(**kw), train_dataset=ds,
                      processing_class=H.tokenizer("right"))
    theirs = trl.DPOTrainer(H.model(), ref_model=H.model(seed=1), args=trl.DPOConfig(**kw), train_dataset=ds,
                            processing_class=H.tokenizer("right"))
    batch_o = ours._prepare_inputs(next(iter(ours.get_train_dataloader())))
    batch_t = theirs._prepare_inputs(next(iter(theirs.get_train_dataloader())))
    for key in ("input_ids", "attention_mask", "completion_mask"):
        assert torch.equal(batch_o[key], batch_t[key]), key
    for variant in DPO_VARIANTS:
        variant = {"label_smoothing": 0.0, "f_divergence_type": "reverse_kl", "ld_alpha": None,
                   "loss_weights": None, "f_alpha_divergence_coef": 0.5, **variant}
        for name, value in variant.items():
            setattr(ours.args, name, value)
        theirs.loss_types = variant["loss_type"]
        theirs.loss_weights = variant["loss_weights"] or [1.0] * len(variant["loss_type"])
        theirs.label_smoothing = variant["label_smoothing"]
        theirs.f_divergence_type = variant["f_divergence_type"]
        theirs.f_alpha_divergence_coef = variant["f_alpha_divergence_coef"]
        theirs.ld_alpha = variant["ld_alpha"]
        lo, go = H.loss_and_grad_norm(ours, batch_o)
        lt, gt = H.loss_and_grad_norm(theirs, batch_t)
        H.assert_close(lo, lt, what=f"DPO {variant} loss")
        H.assert_close(go, gt, what=f"DPO {variant} grad_norm")


# ------------------------------------------------------------------------------------------------------------ KTO
@pytest.mark.parametrize("loss_type", ["kto", "apo_zero_unpaired"])
def test_kto_parity(loss_type: str, tmp_path) -> None:
    """Oracle: trl.KTOTrainer (TRL 1.16), one training step (KL term from mismatched pairs for `kto`)."""
    trl = H.trl_1_16()
    from reference_impl import KTOConfig, KTOTrainer

    ds = H.unpaired_dataset(4) if loss_type == "kto" else H.preference_dataset(conversational=True)
    kw = H.config_kwargs(tmp_path, loss_type=loss_type, per_device_train_batch_size=4, beta=0.5)
    ours = H.first_log(KTOTrainer(H.model(), ref_model=H.model(seed=2), args=KTOConfig(**kw), train_dataset=ds,
                                  processing_class=H.tokenizer("right")))
    theirs = H.first_log(trl.KTOTrainer(H.model(), ref_model=H.model(seed=2), args=trl.KTOConfig(**kw),
                                        train_dataset=ds, processing_class=H.tokenizer("right")))
    _assert_same_step(ours, theirs, f"KTO {loss_type}", ("kl", "rewards/chosen", "logps/chosen"))


# --------------------------------------------------------------------------------------------------------- Reward
@pytest.mark.parametrize("center", [None, 0.01])
def test_reward_parity(center, tmp_path) -> None:
    """Oracle: trl.RewardTrainer.compute_loss (TRL 1.16), one training step."""
    trl = H.trl_1_16()
    from reference_impl import RewardConfig, RewardTrainer

    ds = H.preference_dataset(conversational=center is not None)
    kw = H.config_kwargs(tmp_path, center_rewards_coefficient=center)
    seq = dict(kind="sequence-classification", num_labels=1)
    ours = H.first_log(RewardTrainer(H.model(**seq), args=RewardConfig(**kw), train_dataset=ds,
                                     processing_class=H.tokenizer("right")))
    theirs = H.first_log(trl.RewardTrainer(H.model(**seq), args=trl.RewardConfig(**kw), train_dataset=ds,
                                           processing_class=H.tokenizer("right")))
    _assert_same_step(ours, theirs, "Reward", ("accuracy", "margin", "mean_reward"))


# ----------------------------------------------------------------------------------------------------------- GRPO
def _grpo_pair(tmp_path, trl, **overrides):
    from reference_impl import GRPOConfig, GRPOTrainer

    class Ours(GRPOTrainer):
        def _generate_completions(self, prompt_ids, generation_config=None, model=None):
            return H.fixed_completions(prompt_ids), None

    class Theirs(trl.GRPOTrainer):
        def _generate_single_turn(self, prompt_ids, images, multimodal_fields, num_generations,
                                  has_tool_images=False):
            return H.fixed_completions(prompt_ids), None

    path = str(tmp_path / "ref")
    H.model(seed=1).save_pretrained(path)
    policy_o, policy_t = H.model(), H.model()
    policy_o.config._name_or_path = policy_t.config._name_or_path = path  # TRL reloads its reference from here
    kw = H.config_kwargs(tmp_path, num_generations=2, per_device_train_batch_size=4, max_completion_length=6,
                         **overrides)
    rewards = [H.reward_len, H.reward_vowels]
    ds = H.prompt_only_dataset(2, conversational=True)
    ours = Ours(policy_o, reward_funcs=rewards, args=GRPOConfig(**kw), train_dataset=ds,
                processing_class=H.tokenizer())
    theirs = Theirs(policy_t, reward_funcs=rewards, args=trl.GRPOConfig(**kw), train_dataset=ds,
                    processing_class=H.tokenizer())
    if kw.get("beta"):
        _with_reference(ours, H.model(seed=1))
    return ours, theirs


def test_grpo_parity_end_to_end(tmp_path) -> None:
    """Oracle: trl.GRPOTrainer (TRL 1.16), one training step with the k3 KL to a different reference."""
    trl = H.trl_1_16()
    ours, theirs = _grpo_pair(tmp_path, trl, beta=0.1, loss_type="grpo")
    _assert_same_step(H.first_log(ours), H.first_log(theirs), "GRPO",
                      ("kl", "reward", "reward_std", "entropy", "completions/mean_length"))


@pytest.mark.parametrize("level", ["token", "sequence"])
def test_grpo_parity_every_loss_type(level: str, tmp_path) -> None:
    """Oracle: trl.GRPOTrainer.compute_loss (TRL 1.16) for every loss type on the same rollouts (num_iterations=2,
    so old log-probs are scored too), token- and sequence-level importance sampling."""
    import torch

    trl = H.trl_1_16()
    ours, theirs = _grpo_pair(tmp_path, trl, beta=0.05, importance_sampling_level=level, num_iterations=2,
                              epsilon_high=0.28, delta=1.5)
    inputs = {}
    for name, trainer in (("ours", ours), ("theirs", theirs)):
        trainer.model.train()
        trainer.current_gradient_accumulation_steps = 1  # set by Trainer.train(); we call compute_loss directly
        torch.manual_seed(0)
        inputs[name] = trainer._prepare_inputs(next(iter(trainer.get_train_dataloader())))
    for loss_type in ("grpo", "dr_grpo", "dapo", "bnpo", "cispo", "sapo", "luspo", "vespo"):
        ours.args.loss_type = theirs.loss_type = loss_type
        theirs.args.loss_type = loss_type
        lo, go = H.loss_and_grad_norm(ours, inputs["ours"])
        lt, gt = H.loss_and_grad_norm(theirs, inputs["theirs"])
        H.assert_close(lo, lt, what=f"GRPO {loss_type}/{level} loss")
        H.assert_close(go, gt, what=f"GRPO {loss_type}/{level} grad_norm")


# ----------------------------------------------------------------------------------------------------------- RLOO
def test_rloo_parity(tmp_path) -> None:
    """Oracle: trl.RLOOTrainer (TRL 1.16), one step, KL in the reward against a different reference."""
    trl = H.trl_1_16()
    from reference_impl import RLOOConfig, RLOOTrainer

    class Ours(RLOOTrainer):
        def _generate_completions(self, prompt_ids, generation_config=None, model=None):
            return H.fixed_completions(prompt_ids), None

    class Theirs(trl.RLOOTrainer):
        def _generate_single_turn(self, prompt_ids, images, multimodal_fields):
            return H.fixed_completions(prompt_ids)

    path = str(tmp_path / "ref")
    H.model(seed=1).save_pretrained(path)
    policy_o, policy_t = H.model(), H.model()
    policy_o.config._name_or_path = policy_t.config._name_or_path = path
    kw = H.config_kwargs(tmp_path, num_generations=2, per_device_train_batch_size=4, max_completion_length=6,
                         beta=0.05, normalize_advantages=True)
    ds = H.prompt_only_dataset(2)
    ours = _with_reference(Ours(policy_o, reward_funcs=[H.reward_len, H.reward_vowels], args=RLOOConfig(**kw),
                                train_dataset=ds, processing_class=H.tokenizer()), H.model(seed=1))
    theirs = Theirs(policy_t, reward_funcs=[H.reward_len, H.reward_vowels], args=trl.RLOOConfig(**kw),
                    train_dataset=ds, processing_class=H.tokenizer())
    _assert_same_step(H.first_log(ours), H.first_log(theirs), "RLOO", ("kl", "reward", "entropy"))


# --------------------------------------------------------------------------------------------------- Distillation
def test_distillation_parity_every_beta(tmp_path) -> None:
    """Oracle: trl.DistillationTrainer.compute_loss (TRL 1.16, chunked divergence) for forward KL, JSD and reverse
    KL on the same on-policy rollouts; plus one end-to-end training step."""
    trl = H.trl_1_16()
    import torch

    from reference_impl import DistillationConfig, DistillationTrainer

    class Ours(DistillationTrainer):
        def _generate_completions(self, prompt_ids, generation_config=None, model=None):
            return H.fixed_completions(prompt_ids), None

    class Theirs(trl.DistillationTrainer):
        def _generate_single_turn(self, prompt_ids, images, multimodal_fields, has_tool_images=False):
            return H.fixed_completions(prompt_ids)

    ds = H.prompt_only_dataset(2, conversational=True)
    kw = H.config_kwargs(tmp_path, max_completion_length=6, beta=0.5, temperature=0.7)
    ours = Ours(H.model(), teacher_model=H.model(seed=3), args=DistillationConfig(**kw), train_dataset=ds,
                processing_class=H.tokenizer())
    theirs = Theirs(H.model(), teacher_model=H.model(seed=3), args=trl.DistillationConfig(**kw), train_dataset=ds,
                    processing_class=H.tokenizer())
    inputs = {}
    for name, trainer in (("ours", ours), ("theirs", theirs)):
        trainer.model.train()
        trainer.current_gradient_accumulation_steps = 1  # set by Trainer.train(); we call compute_loss directly
        torch.manual_seed(0)
        inputs[name] = trainer._prepare_inputs(next(iter(trainer.get_train_dataloader())))
    for beta in (0.0, 0.5, 1.0):
        ours.beta = theirs.beta = beta
        lo, go = H.loss_and_grad_norm(ours, inputs["ours"])
        lt, gt = H.loss_and_grad_norm(theirs, inputs["theirs"])
        H.assert_close(lo, lt, what=f"distillation beta={beta} loss")
        H.assert_close(go, gt, what=f"distillation beta={beta} grad_norm")
    ours._buffered_inputs = theirs._buffered_inputs = None
    _assert_same_step(H.first_log(ours), H.first_log(theirs), "Distillation", ("entropy",))


# ----------------------------------------------------------------------------------------------------- Online DPO
@pytest.mark.parametrize("loss_type", ["sigmoid", "ipo"])
def test_online_dpo_parity(loss_type: str, tmp_path) -> None:
    """Oracle: trl.experimental.online_dpo.OnlineDPOTrainer.training_step (TRL 1.16), fixed completions on both
    sides, a separate reference model and the missing-EOS penalty."""
    H.trl_1_16()
    from trl.experimental.online_dpo import OnlineDPOConfig as TRLConfig
    from trl.experimental.online_dpo import OnlineDPOTrainer as TRLTrainer
    from trl.experimental.utils import truncate_right

    from reference_impl import OnlineDPOConfig, OnlineDPOTrainer
    from reference_impl.trainers._data import pad_lists

    class Ours(OnlineDPOTrainer):
        def _generate_completions(self, prompt_ids, generation_config=None, model=None):
            return H.fixed_completions(prompt_ids), None

    class Theirs(TRLTrainer):
        def _generate(self, model, prompts, images=None):
            from trl.data_utils import maybe_apply_chat_template

            texts = [maybe_apply_chat_template({"prompt": p}, self.processing_class)["prompt"] for p in prompts]
            enc = self.processing_class(text=texts, return_tensors="pt", padding=True, padding_side="left",
                                        add_special_tokens=False)
            ids, mask = enc["input_ids"].repeat(2, 1), enc["attention_mask"].repeat(2, 1)
            completions = H.fixed_completions([row[m.bool()].tolist() for row, m in zip(ids, mask)])
            completion_ids, completion_mask = truncate_right(pad_lists(completions, self._tokenizer.pad_token_id),
                                                             self.eos_token_ids, self._tokenizer.pad_token_id)
            return ids, mask, completion_ids, completion_mask, None

    ds = H.prompt_only_dataset(2, conversational=loss_type == "ipo")
    kw = H.config_kwargs(tmp_path, loss_type=loss_type, missing_eos_penalty=1.0, max_new_tokens=6, beta=0.2)
    ours = H.first_log(Ours(H.model(), ref_model=H.model(seed=1), reward_funcs=H.reward_len,
                            args=OnlineDPOConfig(**kw), train_dataset=ds, processing_class=H.tokenizer()))
    theirs = H.first_log(Theirs(H.model(), ref_model=H.model(seed=1), reward_funcs=H.reward_len,
                                args=TRLConfig(**kw), train_dataset=ds, processing_class=H.tokenizer()))
    # TRL's objective/entropy and objective/kl also sum the padding positions after EOS; ours mask them.
    _assert_same_step(ours, theirs, f"Online DPO {loss_type}",
                      ("rewards/margins", "logps/chosen", "logps/rejected", "objective/scores_margin"))


# ----------------------------------------------------------------------------------------------------------- A2PO
def test_a2po_parity(tmp_path) -> None:
    """Oracle: trl.experimental.a2po.A2POTrainer.compute_loss (TRL 1.16) on the same Stage-2 batch: fixed
    completions, rewards and V* fed to both."""
    H.trl_1_16()
    import torch
    from trl.experimental.a2po import A2POConfig as TRLConfig
    from trl.experimental.a2po import A2POTrainer as TRLTrainer

    from reference_impl import A2POConfig, A2POTrainer

    kw = H.config_kwargs(tmp_path, max_completion_length=6, beta2=0.1)
    ds = H.prompt_only_dataset(2)
    ours = A2POTrainer(H.model(), reward_funcs=H.reward_len, args=A2POConfig(**kw), train_dataset=ds,
                       processing_class=H.tokenizer())
    theirs = TRLTrainer(H.model(), reward_funcs=H.reward_len, args=TRLConfig(**kw), train_dataset=ds,
                        processing_class=H.tokenizer())
    # a different reference on both sides, so the implicit reward is not zero
    ref = H.model(seed=1)
    _with_reference(ours, ref)
    theirs.ref_model = H.model(seed=1).eval()
    prompt_ids = [ids for ids in H.tokenizer()(list(ds["prompt"]), add_special_tokens=False)["input_ids"]]
    completions = H.fixed_completions(prompt_ids)
    batch = ours._pad_completions(prompt_ids, completions)
    rewards, v_star = torch.tensor([0.0, 1.0]), torch.tensor([0.3, 0.6])
    with torch.no_grad():
        ref_logps = ours._sequence_logps(ours.ref_model, batch)
    inputs_o = {**batch, "ref_logps": ref_logps, "rewards": rewards, "v_star": v_star}
    input_ids = torch.cat([batch["prompt_ids"], batch["completion_ids"]], 1)
    attention_mask = torch.cat([batch["prompt_mask"], batch["completion_mask"]], 1)
    keep = batch["completion_ids"].size(1)
    with torch.no_grad():
        ref_t = theirs._get_sequence_logps(theirs.ref_model, input_ids, attention_mask, keep)
    H.assert_close(float(ref_logps.sum()), float(ref_t.sum()), what="A2PO reference log-probs")
    inputs_t = {"input_ids": input_ids, "attention_mask": attention_mask, "logits_to_keep": keep,
                "ref_logps": ref_t, "rewards": rewards, "v_star": v_star}
    lo, go = H.loss_and_grad_norm(ours, inputs_o)
    lt, gt = H.loss_and_grad_norm(theirs, inputs_t)
    H.assert_close(lo, lt, what="A2PO loss")
    H.assert_close(go, gt, what="A2PO grad_norm")
