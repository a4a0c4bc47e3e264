"""TRL 1.0's `judge=` in the reference XPO and Nash-MD trainers (removed from TRL in 1.1; the reference keeps it).

What TRL 1.0 computed, read from its wheel (`trl/experimental/{xpo,nash_md}/*_trainer.py`, `_compute_judge`): the
judge gets the prompts and, per prompt, `[y, y']` (the policy's sample first, the other policy's second), each
decoded without special tokens and stripped. XPO reads its answer as a ranking (0: `y` chosen, else `y'`) and applies
its DPO + exploration loss to that ranking; Nash-MD asks for scores (`return_scores=True`) and uses them as
`P(y > y')` in its REINFORCE loss. Judged steps log no reward scores. The losses are held against float64 formulas
written out here, on log-probs computed here by plain float64 forwards of each unpadded row.
"""

from __future__ import annotations

import copy
import math

import pytest

from . import _trainer_helpers as H


def _judges(calls: list):
    """Two plain `compat.trl.BasePairwiseJudge` subclasses with rules the test controls, every call recorded.
    `Ranking`: the longer completion wins (ties: the first), the last pair gets -1 (an unreadable answer).
    `Scoring`: with `return_scores=True`, `P(first) = (len(a) + 1) / (len(a) + len(b) + 2)`."""
    from compat.trl import BasePairwiseJudge

    class Ranking(BasePairwiseJudge):
        def judge(self, prompts, completions, shuffle_order=True):
            calls.append((list(prompts), [list(pair) for pair in completions]))
            return [int(len(b) > len(a)) for a, b in completions[:-1]] + [-1]

    class Scoring(BasePairwiseJudge):
        def judge(self, prompts, completions, shuffle_order=True, return_scores=False):
            calls.append((list(prompts), [list(pair) for pair in completions]))
            assert return_scores, "TRL 1.0's Nash-MD asks for scores"
            return [(len(a) + 1) / (len(a) + len(b) + 2) for a, b in completions]

    return Ranking(), Scoring()


def _trainer(name: str, tmp_path, judge, conversational: bool = False, **overrides):
    import reference_impl as ri

    trainer_cls, config = (ri.XPOTrainer, ri.XPOConfig) if name == "xpo" else (ri.NashMDTrainer, ri.NashMDConfig)
    kw = H.config_kwargs(tmp_path, **{"max_new_tokens": 6, **overrides})
    return trainer_cls(H.model(), ref_model=H.model(seed=1), judge=judge, args=config(**kw),
                       train_dataset=H.prompt_only_dataset(4, conversational=conversational),
                       processing_class=H.tokenizer("left"))


def _fixed_pairs(trainer) -> None:
    """`y` and `y'` from `fixed_completions` (the first and second repeat of each prompt: different texts)."""
    trainer._sample_pair = lambda ids: H.fixed_completions(ids + ids)


def _row_logps(model, batch, row: int) -> list[float]:
    """float64 per-token log-probs of row `row`'s completion under `model`: one unpadded forward, no engine."""
    import torch

    prompt = batch["prompt_ids"][row][batch["prompt_mask"][row].bool()]
    completion = batch["completion_ids"][row][batch["completion_mask"][row].bool()]
    ids = torch.cat([prompt, completion]).unsqueeze(0)
    m = copy.deepcopy(model).double().eval()
    with torch.no_grad():
        logits = m(input_ids=ids).logits[0, prompt.numel() - 1: -1]
    logp = torch.log_softmax(logits.double(), -1).gather(-1, completion.unsqueeze(-1)).squeeze(-1)
    return logp.tolist()


def _expected_pairs(trainer, inputs, conversational: bool) -> tuple[list[str], list[list[str]]]:
    """What TRL 1.0's `_compute_judge` hands the judge, rebuilt with jinja2 and TRL's template as TRL did."""
    import jinja2

    from compat.trl import SIMPLE_CHAT_TEMPLATE

    n = len(inputs)
    texts = [t.strip() for t in trainer._tokenizer.batch_decode(H.fixed_completions(trainer._prompt_ids(inputs) * 2),
                                                                 skip_special_tokens=True)]
    prompts = [x["prompt"] for x in inputs]
    if conversational:
        template = jinja2.Environment().from_string(SIMPLE_CHAT_TEMPLATE)
        prompts = [template.render(messages=p) for p in prompts]
        texts = [template.render(messages=[{"role": "assistant", "content": t}]) for t in texts]
    return prompts, [[texts[i], texts[n + i]] for i in range(n)]


@pytest.mark.parametrize("loss_type", ["sigmoid", "ipo"])
@pytest.mark.parametrize("conversational", [False, True], ids=["text", "chat"])
def test_xpo_judge_ranks_the_pair_and_the_loss_follows(conversational: bool, loss_type: str, tmp_path) -> None:
    """XPO with a judge: it sees `[y, y']` as TRL 1.0 built them; its answer ranks the pair (0 -> y chosen, 1 or -1
    -> y'); loss = mean_i [DPO(chosen_i, rejected_i) + alpha * log pi(y'_i)], in float64 here."""
    import torch

    calls: list = []
    ranking, _ = _judges(calls)
    beta, alpha = 0.3, 0.05
    trainer = _trainer("xpo", tmp_path, ranking, conversational, beta=[beta], alpha=[alpha], loss_type=loss_type)
    assert trainer.judge is ranking and trainer.reward_funcs is None
    _fixed_pairs(trainer)
    inputs = [trainer.train_dataset[i] for i in range(3)]
    batch = trainer._prepare_inputs(inputs)
    assert "rewards" not in batch
    [(prompts, pairs)] = calls
    assert (prompts, pairs) == _expected_pairs(trainer, inputs, conversational)
    y_wins = [len(b) <= len(a) for a, b in pairs[:-1]] + [False]
    assert True in y_wins, pairs  # both answers occur (the last pair is -1)
    n = len(inputs)
    assert batch["chosen_idx"].tolist() == [i if w else n + i for i, w in enumerate(y_wins)]

    loss = trainer.compute_loss(trainer.model, batch)
    pi = [sum(_row_logps(trainer.model, batch, r)) for r in range(2 * n)]
    ref = [sum(_row_logps(trainer.ref_model, batch, r)) for r in range(2 * n)]
    total = 0.0
    for i, w in enumerate(y_wins):
        c, r = (i, n + i) if w else (n + i, i)
        logits = (pi[c] - ref[c]) - (pi[r] - ref[r])
        dpo = -math.log(1 / (1 + math.exp(-beta * logits))) if loss_type == "sigmoid" else (logits - 1 / (2 * beta)) ** 2
        total += dpo + alpha * pi[n + i]
    H.assert_close(loss.item(), total / n, tol=1e-4, what="judged XPO loss")
    metrics = trainer._metrics["train"]
    assert not {"objective/model_scores", "objective/ref_scores", "objective/scores_margin"} & set(metrics)
    assert {"loss/dpo", "loss/xpo", "rewards/accuracies", "alpha", "beta"} <= set(metrics)
    assert isinstance(loss, torch.Tensor) and loss.requires_grad


@pytest.mark.parametrize("conversational", [False, True], ids=["text", "chat"])
def test_nash_md_judge_scores_are_the_preference(conversational: bool, tmp_path) -> None:
    """Nash-MD with a judge: `P(y > y') = judge.judge(prompts, [[y, y'], ...], return_scores=True)`; loss =
    mean_i [beta * sum_t (lp_t - lr_t) lp_t - (P_i - 1/2) sum_t lp_t] on the policy's samples, in float64 here."""
    calls: list = []
    _, scoring = _judges(calls)
    beta = 0.2
    trainer = _trainer("nash_md", tmp_path, scoring, conversational, beta=[beta])
    _fixed_pairs(trainer)
    inputs = [trainer.train_dataset[i] for i in range(3)]
    batch = trainer._prepare_inputs(inputs)
    [(prompts, pairs)] = calls
    assert (prompts, pairs) == _expected_pairs(trainer, inputs, conversational)
    probability = [(len(a) + 1) / (len(a) + len(b) + 2) for a, b in pairs]
    assert batch["judge_probability"].tolist() == pytest.approx(probability)

    loss = trainer.compute_loss(trainer.model, batch)
    total = 0.0
    for i, p in enumerate(probability):
        lp, lr = _row_logps(trainer.model, batch, i), _row_logps(trainer.ref_model, batch, i)
        total += beta * sum((a - b) * a for a, b in zip(lp, lr, strict=True)) - (p - 0.5) * sum(lp)
    H.assert_close(loss.item(), total / len(probability), tol=1e-4, what="judged Nash-MD loss")
    metrics = trainer._metrics["train"]
    assert not {"rewards/chosen", "rewards/rejected"} & set(metrics)
    assert metrics["rewards/probabilities"][-1] == pytest.approx(sum(probability) / len(probability), rel=1e-6)


def test_judge_or_one_reward(tmp_path, caplog) -> None:
    """TRL 1.0's rules: a judge needs no reward (and is not held to "one reward"); given both, the judge wins with
    a warning; neither is an error."""
    import logging

    import reference_impl as ri

    ranking, scoring = _judges([])
    for name, judge in (("xpo", ranking), ("nash_md", scoring)):
        with caplog.at_level(logging.WARNING, logger="reference_impl.trainers.online_dpo"):
            trainer = _trainer(name, tmp_path / name, judge)
        assert trainer.reward_funcs is None
    args = ri.XPOConfig(**H.config_kwargs(tmp_path))
    with caplog.at_level(logging.WARNING, logger="reference_impl.trainers.online_dpo"):
        trainer = ri.XPOTrainer(H.model(), reward_funcs=[H.reward_len, H.reward_len], judge=ranking, args=args,
                                train_dataset=H.prompt_only_dataset(2), processing_class=H.tokenizer("left"))
    assert "Using `judge` and ignoring `reward_funcs`" in caplog.text and trainer.reward_funcs is None
    with pytest.raises(ValueError, match="only supports one reward"):
        ri.NashMDTrainer(H.model(), args=ri.NashMDConfig(**H.config_kwargs(tmp_path)),
                         train_dataset=H.prompt_only_dataset(2), processing_class=H.tokenizer("left"))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["xpo", "nash_md"])
def test_judged_trainer_trains_two_steps(name: str, tmp_path) -> None:
    """Real generation (the reference's samples for XPO, the geometric mixture for Nash-MD), a judge on every pair:
    2 finite steps, the policy moves, the judge was asked once per step."""
    import torch

    calls: list = []
    ranking, scoring = _judges(calls)
    trainer = _trainer(name, tmp_path, ranking if name == "xpo" else scoring, max_steps=2)
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    trainer.train()
    logs = [h for h in trainer.state.log_history if "loss" in h]
    assert len(logs) == 2 and all(math.isfinite(h["loss"]) for h in logs), logs
    assert len(calls) == 2 and all(len(pairs) == 2 for _, pairs in calls)
    expected = {"loss/dpo", "loss/xpo", "alpha"} if name == "xpo" else {"loss/kl", "loss/score", "mixture_coef"}
    assert expected | {"val/model_contain_eos_token", "val/ref_contain_eos_token", "beta"} <= set(logs[0]), logs[0]
    assert any(not torch.equal(before[n], p.detach()) for n, p in trainer.model.named_parameters())
