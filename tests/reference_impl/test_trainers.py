"""Every reference trainer trains a few steps on a tiny model/tokenizer (compat.tiny), with and without LoRA, plus the
contracts around them: config fields, dataset errors, reward-function forms, reference models, checkpointing.

Real transformers/peft/datasets throughout; the only thing replaced is nothing: online trainers really call
`model.generate` here (the parity tests fix the completions instead).
"""

from __future__ import annotations

import ast
import math
import pathlib
import subprocess
import sys

import pytest

from . import _trainer_helpers as H

ROOT = pathlib.Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------------------------------------ cheap contracts
def test_reference_impl_never_imports_trl() -> None:
    """Static check: no library module of reference_impl imports trl (it must work where TRL is absent).
    `reference_impl/bench.py` is excluded: the benchmark measures TRL's kernels as a baseline, on purpose."""
    offenders = []
    for path in (ROOT / "reference_impl").rglob("*.py"):
        if path.name == "bench.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            offenders += [f"{path.name}: {n}" for n in names if n == "trl" or n.startswith("trl.")]
    assert not offenders, offenders


def test_import_is_light() -> None:
    """`import reference_impl` loads neither torch nor transformers (exports are lazy). Training without TRL
    importable is exercised by the DDP job (tests/reference_impl/_distributed_job.py blocks `import trl`)."""
    code = ("import sys; import reference_impl; "
            "heavy = [m for m in ('torch', 'transformers', 'trl') if m in sys.modules]; "
            "assert not heavy, heavy; assert 'GRPOTrainer' in dir(reference_impl); print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr[-3000:]


def test_unsupported_and_unknown_fields(tmp_path) -> None:
    from reference_impl import DPOConfig, GRPOConfig, SFTConfig, UnsupportedFieldError

    with pytest.raises(UnsupportedFieldError, match="packing"):
        SFTConfig(**H.config_kwargs(tmp_path, packing=True))
    with pytest.raises(UnsupportedFieldError, match="sync_ref_model"):
        DPOConfig(**H.config_kwargs(tmp_path, sync_ref_model=True))
    with pytest.raises(UnsupportedFieldError, match="vllm_mode"):
        GRPOConfig(**H.config_kwargs(tmp_path, use_vllm=True, num_generations=2))
    with pytest.raises(TypeError, match="kl_coef"):
        GRPOConfig(**H.config_kwargs(tmp_path, kl_coef=0.1))
    with pytest.raises(ValueError, match="divisible by num_generations"):
        GRPOConfig(**H.config_kwargs(tmp_path, per_device_train_batch_size=3, num_generations=2))
    config = GRPOConfig(**H.config_kwargs(tmp_path, num_generations=2, scale_rewards=False))
    assert config.scale_rewards == "none" and config.steps_per_generation == 1 and config.generation_batch_size == 2


def test_every_config_parses_from_the_command_line() -> None:
    """`HfArgumentParser` (and so TRL's `TrlParser`, which migrated scripts keep) takes every config; per-epoch lists
    parse as lists, one value stays a float, and an unsupported field still refuses to be set."""
    from transformers import HfArgumentParser

    import reference_impl as ri
    from reference_impl.trainers import EXPORTS

    for name in (n for n in EXPORTS if n.endswith("Config")):
        (args,) = HfArgumentParser(getattr(ri, name)).parse_args_into_dataclasses(["--output_dir", "o", "--use_cpu"])
        assert args.output_dir == "o", name
    (xpo,) = HfArgumentParser(ri.XPOConfig).parse_args_into_dataclasses(
        ["--output_dir", "o", "--use_cpu", "--alpha", "1e-4", "1e-5", "--beta", "0.2"])
    assert xpo.alpha == [1e-4, 1e-5] and xpo.beta == 0.2
    with pytest.raises(ri.UnsupportedFieldError, match="vllm_tensor_parallel_size"):
        HfArgumentParser(ri.NashMDConfig).parse_args_into_dataclasses(
            ["--output_dir", "o", "--use_cpu", "--vllm_tensor_parallel_size", "2"])
    trl_parser = pytest.importorskip("trl").TrlParser  # its own field parsing copies each field's metadata
    (nash,) = trl_parser(ri.NashMDConfig).parse_args_into_dataclasses(["--output_dir", "o", "--use_cpu"])
    assert nash.mixture_coef == 0.5 and nash.beta == 0.1


def test_missing_columns_are_reported(tmp_path) -> None:
    from datasets import Dataset

    from reference_impl import DPOConfig, DPOTrainer, SFTConfig, SFTTrainer
    from reference_impl.trainers._data import DatasetFormatError

    bad = Dataset.from_dict({"question": ["a b"], "answer": ["c"]})
    with pytest.raises(DatasetFormatError, match="'prompt', 'completion'"):
        SFTTrainer(H.model(), args=SFTConfig(**H.config_kwargs(tmp_path)), train_dataset=bad,
                   processing_class=H.tokenizer("right"))
    with pytest.raises(DatasetFormatError, match="'chosen', 'rejected'"):
        DPOTrainer(H.model(), args=DPOConfig(**H.config_kwargs(tmp_path)), train_dataset=bad,
                   processing_class=H.tokenizer("right"))


def test_create_reference_model_copies_or_shares() -> None:
    from reference_impl import create_reference_model

    policy = H.model()
    ref = create_reference_model(policy)
    assert all(not p.requires_grad for p in ref.parameters()) and not ref.training
    assert all(p.data_ptr() != q.data_ptr() for p, q in zip(policy.parameters(), ref.parameters()))
    shared = create_reference_model(policy, num_shared_layers=1)
    pairs = dict(zip([n for n, _ in policy.named_parameters()], zip(policy.parameters(), shared.parameters())))
    assert pairs["model.embed_tokens.weight"][0].data_ptr() == pairs["model.embed_tokens.weight"][1].data_ptr()
    assert not policy.get_parameter("model.embed_tokens.weight").requires_grad  # shared layers freeze in the policy
    assert pairs["model.layers.1.mlp.up_proj.weight"][0].data_ptr() != pairs["model.layers.1.mlp.up_proj.weight"][1].data_ptr()


def test_lora_on_the_head_is_refused(tmp_path) -> None:
    from reference_impl import SFTConfig, SFTTrainer

    with pytest.raises(ValueError, match="lm_head"):
        SFTTrainer(H.model(), args=SFTConfig(**H.config_kwargs(tmp_path)), train_dataset=H.lm_dataset(),
                   processing_class=H.tokenizer("right"),
                   peft_config=H.lora_config(target_modules=["q_proj", "lm_head"]))


# --------------------------------------------------------------------------------------------- every trainer trains
def _binary_reward(completions, **kwargs):
    return [float(len(c if isinstance(c, str) else c[0]["content"]) % 2) for c in completions]


def _build(name: str, tmp_path, lora: bool, **overrides):
    """A trainer of `name` on tiny data, 2 optimizer steps."""
    import reference_impl as ri

    kw = H.config_kwargs(tmp_path, **{"max_steps": 2, **overrides})
    peft = H.lora_config() if lora else None
    tok_r, tok_l = H.tokenizer("right"), H.tokenizer("left")
    if name == "sft":
        return ri.SFTTrainer(H.model(), args=ri.SFTConfig(**kw), train_dataset=H.prompt_completion_dataset(),
                             processing_class=tok_r, peft_config=peft)
    if name == "dpo":
        return ri.DPOTrainer(H.model(), args=ri.DPOConfig(**kw), train_dataset=H.preference_dataset(),
                             processing_class=tok_r, peft_config=peft)
    if name == "kto":
        return ri.KTOTrainer(H.model(), args=ri.KTOConfig(**kw), train_dataset=H.preference_dataset(),
                             processing_class=tok_r, peft_config=peft)
    if name == "bco":
        return ri.BCOTrainer(H.model(), args=ri.BCOConfig(**kw), train_dataset=H.unpaired_dataset(),
                             processing_class=tok_r, peft_config=peft)
    if name == "reward":
        return ri.RewardTrainer(H.model("sequence-classification", num_labels=1), args=ri.RewardConfig(**kw),
                                train_dataset=H.preference_dataset(), processing_class=tok_r,
                                peft_config=H.lora_config(task_type="SEQ_CLS") if lora else None)
    if name == "grpo":
        kw = {**dict(num_generations=2, max_completion_length=6, beta=0.05), **kw}
        return ri.GRPOTrainer(H.model(), reward_funcs=[H.reward_len, H.reward_vowels], args=ri.GRPOConfig(**kw),
                              train_dataset=H.prompt_only_dataset(4, conversational=True), processing_class=tok_l,
                              peft_config=peft)
    if name == "rloo":
        kw = {**dict(num_generations=2, max_completion_length=6), **kw}
        return ri.RLOOTrainer(H.model(), reward_funcs=H.reward_len, args=ri.RLOOConfig(**kw),
                              train_dataset=H.prompt_only_dataset(4), processing_class=tok_l, peft_config=peft)
    if name == "online_dpo":
        kw = {**dict(max_new_tokens=6), **kw}
        return ri.OnlineDPOTrainer(H.model(), reward_funcs=H.reward_len, args=ri.OnlineDPOConfig(**kw),
                                   train_dataset=H.prompt_only_dataset(4), processing_class=tok_l, peft_config=peft)
    if name in ("xpo", "nash_md"):
        kw = {**dict(max_new_tokens=6), **kw}
        trainer, config = (ri.XPOTrainer, ri.XPOConfig) if name == "xpo" else (ri.NashMDTrainer, ri.NashMDConfig)
        return trainer(H.model(), reward_funcs=H.reward_len, args=config(**kw), train_dataset=H.prompt_only_dataset(4),
                       processing_class=tok_l, peft_config=peft)
    if name == "a2po":
        kw = {**dict(max_completion_length=6, num_value_samples=2, filter_all_incorrect=False), **kw}
        return ri.A2POTrainer(H.model(), reward_funcs=_binary_reward, args=ri.A2POConfig(**kw),
                              train_dataset=H.prompt_only_dataset(4), processing_class=tok_l, peft_config=peft)
    if name == "distillation":
        kw = {**dict(max_completion_length=6, beta=0.5), **kw}
        return ri.DistillationTrainer(H.model(), teacher_model=H.model(seed=3), args=ri.DistillationConfig(**kw),
                                      train_dataset=H.prompt_only_dataset(4), processing_class=tok_l,
                                      peft_config=peft)
    raise KeyError(name)


TRAINERS = ["sft", "dpo", "kto", "bco", "reward", "grpo", "rloo", "online_dpo", "xpo", "nash_md", "a2po",
            "distillation"]


@pytest.mark.slow
@pytest.mark.parametrize("lora", [False, True], ids=["full", "lora"])
@pytest.mark.parametrize("name", TRAINERS)
def test_trainer_trains_two_steps(name: str, lora: bool, tmp_path) -> None:
    import torch

    trainer = _build(name, tmp_path, lora)
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    trainer.train()
    logs = [h for h in trainer.state.log_history if "loss" in h]
    assert len(logs) == 2 and all(math.isfinite(h["loss"]) and math.isfinite(h["grad_norm"]) for h in logs), logs
    changed = {n for n, p in trainer.model.named_parameters() if not torch.equal(before[n], p.detach())}
    assert changed, "no parameter moved"
    if lora:  # only adapters (and a sequence-classification head) train
        assert all("lora_" in n or "score" in n for n in changed), sorted(changed)[:5]


@pytest.mark.slow
def test_gradient_checkpointing_matches_without(tmp_path) -> None:
    """Checkpointing recomputes activations; the first-step loss and gradients must not change (SFT + LoRA, GRPO)."""
    results = {}
    for gc in (False, True):
        for name, lora in (("sft", True), ("grpo", False)):
            trainer = _build(name, tmp_path / f"{name}{gc}", lora, gradient_checkpointing=gc, max_steps=1)
            if name == "grpo":
                trainer._generate_completions = lambda ids, *a, **k: (H.fixed_completions(ids), None)
            results[(name, gc)] = H.first_log(trainer)
    for name in ("sft", "grpo"):
        H.assert_close(results[(name, True)]["loss"], results[(name, False)]["loss"], what=f"{name} loss")
        H.assert_close(results[(name, True)]["grad_norm"], results[(name, False)]["grad_norm"], what=f"{name} grad")


@pytest.mark.slow
def test_reward_function_forms(tmp_path) -> None:
    """Sync and async callables, a model path and a PreTrainedModel, weighted: each is logged under its name and
    the weighted sum is the logged reward."""
    from reference_impl import GRPOConfig, GRPOTrainer

    rm = H.model("sequence-classification", seed=5, num_labels=1)
    rm.save_pretrained(tmp_path / "rm")
    H.tokenizer("right").save_pretrained(tmp_path / "rm")
    rm_obj = H.model("sequence-classification", seed=6, num_labels=1)
    rm_obj.config._name_or_path = "rm_obj"
    funcs = [H.reward_len, H.reward_vowels, str(tmp_path / "rm"), rm_obj]
    weights = [1.0, 2.0, 0.5, -1.0]
    kw = H.config_kwargs(tmp_path, num_generations=2, max_completion_length=6, reward_weights=weights)
    trainer = GRPOTrainer(H.model(), reward_funcs=funcs, args=GRPOConfig(**kw),
                          train_dataset=H.prompt_only_dataset(2), processing_class=H.tokenizer(),
                          reward_processing_classes=[None, None, None, H.tokenizer("right")])
    trainer._generate_completions = lambda ids, *a, **k: (H.fixed_completions(ids), None)
    log = H.first_log(trainer)
    names = ["reward_len", "reward_vowels", "rm", "rm_obj"]
    means = [log[f"rewards/{n}/mean"] for n in names]
    assert all(math.isfinite(m) for m in means), log
    H.assert_close(log["reward"], sum(w * m for w, m in zip(weights, means)), tol=1e-5, what="weighted reward")


@pytest.mark.slow
def test_peft_reference_is_the_base_model(tmp_path) -> None:
    """With LoRA and no ref_model, the reference is the policy with adapters disabled: at step one (B = 0) the
    implicit rewards are exactly zero. beta=0 GRPO builds no reference at all."""
    dpo = _build("dpo", tmp_path / "dpo", lora=True, max_steps=1)
    assert dpo.ref_model is None
    log = H.first_log(dpo)
    assert log["rewards/chosen"] == 0.0 and log["rewards/rejected"] == 0.0, log
    grpo = _build("grpo", tmp_path / "grpo", lora=False, beta=0.0)
    assert grpo.ref_model is None and grpo.beta == 0.0


@pytest.mark.parametrize("coef", [0.0, 1.0])
def test_geometric_mixture_ends_are_the_two_policies(coef: float) -> None:
    """Nash-MD's mixture pi^(1-c) pi_ref^c: greedy (top-1) sampling at c=0 is the policy's greedy `generate`, at
    c=1 the reference's, on left-padded prompts."""
    import contextlib

    import torch
    from transformers import LogitsProcessorList, TopKLogitsWarper

    from reference_impl.trainers.nash_md import sample_geometric_mixture

    policy, ref = H.model(seed=1).eval(), H.model(seed=2).eval()
    tok = H.tokenizer("left")
    enc = tok([H.text(0, 3), H.text(1, 6)], return_tensors="pt", padding=True)
    out = sample_geometric_mixture(policy, lambda: contextlib.nullcontext(ref), enc["input_ids"], enc["attention_mask"],
                                   mixture_coef=coef, max_new_tokens=5, eos_token_ids=[tok.eos_token_id],
                                   logits_processor=LogitsProcessorList([TopKLogitsWarper(top_k=1)]))
    expected_model = ref if coef == 1.0 else policy
    with torch.no_grad():
        greedy = expected_model.generate(**enc, do_sample=False, max_new_tokens=5, pad_token_id=tok.pad_token_id,
                                         eos_token_id=tok.eos_token_id)[:, enc["input_ids"].size(1):]
    for row, want in zip(out, greedy.tolist()):
        cut = want.index(tok.eos_token_id) + 1 if tok.eos_token_id in want else len(want)
        assert row == want[:cut]
