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


def test_configs_parse_from_the_command_line(tmp_path) -> None:
    """`HfArgumentParser((ScriptArguments, XConfig, ModelConfig))` is how TRL's example scripts build configs: every
    reference config must build a parser (argparse refuses unknown field metadata) and parse its own fields, and
    an unsupported field set on the command line must still refuse."""
    from transformers import HfArgumentParser

    import reference_impl
    from reference_impl import UnsupportedFieldError

    for name in (n for n in reference_impl.__all__ if n.endswith("Config")):
        parser = HfArgumentParser(getattr(reference_impl, name))
        (config,) = parser.parse_args_into_dataclasses(["--output_dir", str(tmp_path), "--use_cpu", "--bf16", "false"])
        assert config.output_dir == str(tmp_path), name
    parser = HfArgumentParser(reference_impl.PRMConfig)
    (config,) = parser.parse_args_into_dataclasses(["--output_dir", str(tmp_path), "--step_separator", " ки",
                                                    "--train_on_last_step_only", "true", "--use_cpu"])
    assert config.step_separator == " ки" and config.train_on_last_step_only
    with pytest.raises(UnsupportedFieldError, match="use_liger_kernel"):
        parser.parse_args_into_dataclasses(["--output_dir", str(tmp_path), "--use_liger_kernel", "true"])
    # per-epoch lists parse as lists, one value stays a float
    (xpo,) = HfArgumentParser(reference_impl.XPOConfig).parse_args_into_dataclasses(
        ["--output_dir", "o", "--use_cpu", "--alpha", "1e-4", "1e-5", "--beta", "0.2"])
    assert xpo.alpha == [1e-4, 1e-5] and xpo.beta == 0.2
    with pytest.raises(UnsupportedFieldError, match="vllm_tensor_parallel_size"):
        HfArgumentParser(reference_impl.NashMDConfig).parse_args_into_dataclasses(
            ["--output_dir", "o", "--use_cpu", "--vllm_tensor_parallel_size", "2"])
    trl_parser = pytest.importorskip("trl").TrlParser  # its own field parsing copies each field's metadata
    (nash,) = trl_parser(reference_impl.NashMDConfig).parse_args_into_dataclasses(["--output_dir", "o", "--use_cpu"])
    assert nash.mixture_coef == 0.5 and nash.beta == 0.1


@pytest.mark.parametrize("name", ["OnlineDPOConfig", "BCOConfig", "DPOConfig", "KTOConfig", "SFTConfig",
                                  "RewardConfig", "RLOOConfig"])
def test_configs_parse_with_trl_parser(name: str, tmp_path) -> None:
    """TRL's scripts read their config with `TrlParser((ScriptArguments, XConfig, ModelConfig))`; a migrated script
    that imports ours must too (argparse takes each field's metadata as keywords: only `help` there)."""
    from trl import ModelConfig, ScriptArguments, TrlParser

    import reference_impl as ri

    extra = ["--judge", "pair_rm", "--beta", "0.2", "--missing_eos_penalty", "1.0"] if name == "OnlineDPOConfig" else []
    parser = TrlParser((ScriptArguments, getattr(ri, name), ModelConfig))
    _, config, _ = parser.parse_args_and_config(
        args=["--dataset_name", "d", "--output_dir", str(tmp_path), "--use_cpu", "--model_name_or_path", "m", *extra])
    assert type(config) is getattr(ri, name)
    if name == "OnlineDPOConfig":
        assert (config.judge, config.beta, config.missing_eos_penalty) == ("pair_rm", 0.2, 1.0)


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
    H.train_two_steps(_build(name, tmp_path, lora), lora)


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


# ------------------------------------------------------------------------------------------- Online DPO with a judge
def _longer_wins_judge(calls: list):
    """A plain `compat.trl.BasePairwiseJudge` subclass with a rule the test controls: the longer completion wins
    (ties: the first), and the last pair of a call gets -1 (what TRL's judges return for an unreadable answer). Every
    call is recorded."""
    from compat.trl import BasePairwiseJudge

    class LongerWins(BasePairwiseJudge):
        def judge(self, prompts, completions, shuffle_order=True):
            calls.append((list(prompts), [list(pair) for pair in completions]))
            return [int(len(b) > len(a)) for a, b in completions[:-1]] + [-1]

    return LongerWins()


def _judged_online_dpo(tmp_path, judge, conversational: bool = False, **overrides):
    import reference_impl as ri

    kw = H.config_kwargs(tmp_path, **{"max_new_tokens": 6, **overrides})
    trainer = ri.OnlineDPOTrainer(H.model(), judge=judge, args=ri.OnlineDPOConfig(**kw),
                                  train_dataset=H.prompt_only_dataset(4, conversational=conversational),
                                  processing_class=H.tokenizer("left"))
    trainer._generate_completions = lambda ids, *a, **k: (H.fixed_completions(ids), None)
    return trainer


@pytest.mark.parametrize("conversational", [False, True], ids=["text", "chat"])
def test_online_dpo_judge_picks_chosen_and_rejected(conversational: bool, tmp_path) -> None:
    """The judge sees each prompt with its [first, second] completions (chat rendered with TRL's
    SIMPLE_CHAT_TEMPLATE, here through jinja2 as TRL 1.0 did) and its answer picks chosen/rejected: 0 -> the first,
    1 or -1 -> the second."""
    import jinja2

    from compat.trl import SIMPLE_CHAT_TEMPLATE

    calls: list = []
    trainer = _judged_online_dpo(tmp_path, _longer_wins_judge(calls), conversational)
    assert trainer.reward_funcs is None and trainer.judge is not None
    inputs = [trainer.train_dataset[i] for i in range(3)]
    batch = trainer._prepare_inputs(inputs)
    assert "rewards" not in batch
    [(prompts, pairs)] = calls
    completions = trainer._tokenizer.batch_decode(H.fixed_completions(trainer._prompt_ids(inputs) * 2),
                                                  skip_special_tokens=True)
    template = jinja2.Environment().from_string(SIMPLE_CHAT_TEMPLATE)
    if conversational:
        expected_prompts = [template.render(messages=x["prompt"]) for x in inputs]
        completions = [template.render(messages=[{"role": "assistant", "content": c}]) for c in completions]
        assert prompts[0].startswith("User: ") and completions[0].startswith("Assistant: ")
    else:
        expected_prompts = [x["prompt"] for x in inputs]
    assert prompts == expected_prompts
    assert pairs == [[completions[i], completions[i + 3]] for i in range(3)]
    first_wins = [len(b) <= len(a) for a, b in pairs[:-1]] + [False]
    assert True in first_wins, pairs  # both answers occur
    assert batch["chosen_idx"].tolist() == [i if w else i + 3 for i, w in enumerate(first_wins)]
    assert batch["rejected_idx"].tolist() == [i + 3 if w else i for i, w in enumerate(first_wins)]


def test_online_dpo_judge_or_reward_funcs(tmp_path, caplog) -> None:
    """TRL 1.0's rules: one of them is required; given both, the judge is used and the reward functions ignored."""
    import logging

    import reference_impl as ri

    args = ri.OnlineDPOConfig(**H.config_kwargs(tmp_path))
    with pytest.raises(ValueError, match="One of `judge` or `reward_funcs` must be provided"):
        ri.OnlineDPOTrainer(H.model(), args=args, train_dataset=H.prompt_only_dataset(2),
                            processing_class=H.tokenizer("left"))
    with caplog.at_level(logging.WARNING, logger="reference_impl.trainers.online_dpo"):
        trainer = ri.OnlineDPOTrainer(H.model(), reward_funcs=H.reward_len, judge=_longer_wins_judge([]), args=args,
                                      train_dataset=H.prompt_only_dataset(2), processing_class=H.tokenizer("left"),
                                      reward_processing_classes=[None, None])  # ignored with the reward functions
    assert "Using `judge` and ignoring `reward_funcs`" in caplog.text
    assert trainer.reward_funcs is None and trainer.reward_weights is None
    assert ri.OnlineDPOConfig(**H.config_kwargs(tmp_path, judge="pair_rm")).judge == "pair_rm"  # TRL 1.0's field


@pytest.mark.slow
def test_online_dpo_with_a_judge_trains_two_steps(tmp_path) -> None:
    """Real generation, a judge ranking every pair: 2 finite steps, the policy moves, TRL 1.0's judge metrics (no
    `objective/scores`, `scores_margin` or `rlhf_reward`)."""
    import torch

    import reference_impl as ri

    calls: list = []
    kw = H.config_kwargs(tmp_path, max_steps=2, max_new_tokens=6, missing_eos_penalty=1.0)
    trainer = ri.OnlineDPOTrainer(H.model(), judge=_longer_wins_judge(calls), args=ri.OnlineDPOConfig(**kw),
                                  train_dataset=H.prompt_only_dataset(4), processing_class=H.tokenizer("left"))
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    trainer.train()
    logs = [h for h in trainer.state.log_history if "loss" in h]
    assert len(logs) == 2 and all(math.isfinite(h["loss"]) for h in logs), logs
    assert len(calls) == 2 and all(len(pairs) == 2 for _, pairs in calls)
    assert {"rewards/chosen", "rewards/margins", "objective/kl", "logps/chosen", "val/contain_eos_token"} <= set(logs[0])
    assert not {"objective/scores", "objective/scores_margin", "objective/rlhf_reward"} & set(logs[0])
    assert any(not torch.equal(before[n], p.detach()) for n, p in trainer.model.named_parameters())


def test_online_dpo_takes_a_trl_config_field_by_field(tmp_path) -> None:
    """A TRL `OnlineDPOConfig` given to the reference trainer (a config built in another module than the one the
    migration routed) becomes ours, field by field: same values, ours' class."""
    from trl.experimental.online_dpo import OnlineDPOConfig as TRLConfig

    import reference_impl as ri

    theirs = TRLConfig(**H.config_kwargs(tmp_path, beta=[0.3], max_new_tokens=7, missing_eos_penalty=0.5))
    trainer = ri.OnlineDPOTrainer(H.model(), judge=_longer_wins_judge([]), args=theirs,
                                  train_dataset=H.prompt_only_dataset(2), processing_class=H.tokenizer("left"))
    ours = trainer.args
    assert type(ours) is ri.OnlineDPOConfig
    assert (ours.beta, ours.max_new_tokens, ours.missing_eos_penalty, ours.output_dir) == (0.3, 7, 0.5, str(tmp_path))


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
        greedy = expected_model.generate(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                                         do_sample=False, max_new_tokens=5, pad_token_id=tok.pad_token_id,
                                         eos_token_id=tok.eos_token_id)[:, enc["input_ids"].size(1):]
    for row, want in zip(out, greedy.tolist()):
        cut = want.index(tok.eos_token_id) + 1 if tok.eos_token_id in want else len(want)
        assert row == want[:cut]
