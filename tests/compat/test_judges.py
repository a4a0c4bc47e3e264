"""`compat.trl`'s judges (copies of TRL 1.0.0's `trl.experimental.judges`): what runs offline.

The pure-Python parts against hand-written expectations: `AllTrueJudge`, the base-class contract, the pairwise
protocol (prompt formatting, order flip and flip-back, -1 on an invalid answer) driven through `_pairwise` with a
plain function as the "model"; the backends only by what needs no network: the error naming a missing package
(openai and llm-blender are not installed here), and the Hub client built without a request.
"""

from __future__ import annotations

import importlib.util

import pytest

import compat.trl
from compat import _judges

# the judges flip the pair order with numpy's global RNG, as TRL's did; the `bare` tox env has no numpy
np = pytest.importorskip("numpy", reason="the judges' order flip uses numpy (absent in the bare env)")


class _Fixed(compat.trl.BaseBinaryJudge):
    def __init__(self, votes):
        self.votes = votes
        self.calls = []

    def judge(self, prompts, completions, gold_completions=None, shuffle_order=True):
        self.calls.append((prompts, completions, gold_completions, shuffle_order))
        return self.votes


def test_all_true_judge_unifies_binary_votes():
    a, b = _Fixed([1, 1, 0, -1, 1]), _Fixed([1, 0, 0, 1, -1])
    assert compat.trl.AllTrueJudge([a, b]).judge(["p"] * 5, ["c"] * 5, None, False) == [1, 0, 0, -1, -1]
    assert a.calls == [(["p"] * 5, ["c"] * 5, None, False)]
    with pytest.raises(ValueError, match="Invalid binary judgment"):
        compat.trl.AllTrueJudge([_Fixed([2])]).judge(["p"], ["c"])


def test_base_classes_are_abstract_and_related_as_in_trl():
    for name in ("BaseJudge", "BaseRankJudge", "BasePairwiseJudge", "BaseBinaryJudge"):
        with pytest.raises(TypeError):
            getattr(compat.trl, name)()
    assert issubclass(compat.trl.BasePairwiseJudge, compat.trl.BaseJudge)
    assert issubclass(compat.trl.BaseBinaryJudge, compat.trl.BaseJudge)
    assert not issubclass(compat.trl.BaseRankJudge, compat.trl.BaseJudge)
    for name in ("HfPairwiseJudge", "OpenAIPairwiseJudge", "PairRMJudge"):
        assert issubclass(getattr(compat.trl, name), compat.trl.BasePairwiseJudge)


def test_pairwise_protocol_formats_flips_and_unflips():
    asked = []

    def model(content):  # always prefers the response that contains "good"
        asked.append(content)
        first = content.split('"output": """')[1].split('"""')[0]
        return "0" if "good" in first else "1"

    prompts = ["q0", "q1", "q2", "q3"]
    pairs = [["good a", "bad a"], ["bad b", "good b"], ["good c", "bad c"], ["bad d", "good d"]]
    assert _judges._pairwise(prompts, pairs, False, model, _judges.DEFAULT_PAIRWISE_SYSTEM_PROMPT) == [0, 1, 0, 1]
    assert asked[0] == _judges.DEFAULT_PAIRWISE_SYSTEM_PROMPT.format(prompt="q0", response0="good a",
                                                                     response1="bad a")
    assert '"instruction": """q0"""' in asked[0] and "{" in asked[0] and "{{" not in asked[0]
    np.random.seed(0)
    flips = np.random.choice([True, False], size=4)
    assert flips.any() and not flips.all()  # seed 0 flips some pairs, not all
    asked.clear()
    np.random.seed(0)
    # the answers come back in the original order although flipped pairs were asked the other way round
    assert _judges._pairwise(prompts, pairs, True, model, _judges.DEFAULT_PAIRWISE_SYSTEM_PROMPT) == [0, 1, 0, 1]
    for content, pair, flip in zip(sorted(asked, key=lambda c: c.split('"instruction": """')[1][:2]), pairs, flips):
        first = content.split('"output": """')[1].split('"""')[0]
        assert first == (pair[1] if flip else pair[0])


def test_pairwise_protocol_returns_minus_one_for_an_invalid_answer():
    assert _judges._pairwise(["q"], [["a", "b"]], False, lambda c: "A", "{prompt}{response0}{response1}") == [-1]
    assert _judges._pairwise(["q"], [["a", "b"]], False, lambda c: None, "{prompt}{response0}{response1}") == [-1]


@pytest.mark.skipif(importlib.util.find_spec("openai") is not None, reason="openai is installed")
def test_openai_judge_names_the_missing_package():
    with pytest.raises(_judges.JudgeBackendMissingError, match=r"OpenAIPairwiseJudge needs the `openai` package"):
        compat.trl.OpenAIPairwiseJudge()


@pytest.mark.skipif(importlib.util.find_spec("llm_blender") is not None, reason="llm-blender is installed")
def test_pair_rm_judge_names_the_missing_package():
    with pytest.raises(ValueError, match=r"pip install llm-blender"):
        compat.trl.PairRMJudge()


def test_hf_judge_builds_its_client_without_a_request():
    judge = compat.trl.HfPairwiseJudge(model="some/model", token="hf_x", system_prompt="{prompt}{response0}{response1}")
    from huggingface_hub import InferenceClient

    assert isinstance(judge.client, InferenceClient) and judge.system_prompt == "{prompt}{response0}{response1}"
    assert compat.trl.HfPairwiseJudge().system_prompt == _judges.DEFAULT_PAIRWISE_SYSTEM_PROMPT


def test_a_flipped_failure_comes_back_as_two_as_in_trl():
    # TRL 1.0.0 flips back with `1 - rank`, also for the -1 of an invalid answer; the copy keeps that
    np.random.seed(0)
    flips = np.random.choice([True, False], size=4)
    np.random.seed(0)
    out = _judges._pairwise(["a", "b", "c", "d"], [["x", "y"]] * 4, True, lambda c: "?", "{prompt}{response0}{response1}")
    assert out == [2 if f else -1 for f in flips]
