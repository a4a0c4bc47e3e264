"""Copies of TRL's judges (`trl.experimental.judges`, TRL 0.29 - 1.0; `trl` top level before 0.29; removed in 1.1).

Served through `compat.trl` (`from compat.trl import HfPairwiseJudge`); the migration `removed-judges` points imports
here. No trainer of TRL 1.13 - 1.16 takes a `judge=` any more (Online DPO takes `reward_funcs=`; XPO and Nash-MD are
gone), so these are for code that calls a judge on its own (`judge.judge(prompts, completions)` in evaluation
scripts) and for `reference_impl.OnlineDPOTrainer(judge=)`, TRL 1.0's judged Online DPO (rule `online-dpo-arguments`). Constructor signatures and behaviour are those of TRL 1.0.0 (read from the wheel): the same default system
prompt (kept verbatim, it is what the judge model reads), the same random order flip against positional bias (numpy's
global RNG), the same `-1` for an answer that is not "0" or "1", the same request cap for OpenAI.

The backends are imported inside the constructors (`huggingface_hub.InferenceClient`, `openai.OpenAI`,
`llm_blender`, `accelerate`), so `import compat.trl` stays cheap; a missing one raises `JudgeBackendMissingError`
naming the package to install (TRL raised a `ValueError` for openai and llm-blender; the new class is a ValueError).
"""

from __future__ import annotations

import concurrent.futures
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

__all__ = [
    "DEFAULT_PAIRWISE_SYSTEM_PROMPT",
    "AllTrueJudge",
    "BaseBinaryJudge",
    "BaseJudge",
    "BasePairwiseJudge",
    "BaseRankJudge",
    "HfPairwiseJudge",
    "JudgeBackendMissingError",
    "OpenAIPairwiseJudge",
    "PairRMJudge",
]

logger = logging.getLogger(__name__)

# verbatim from TRL 1.0.0 trl/experimental/judges/judges.py (Apache-2.0): the prompt the judge model is asked
DEFAULT_PAIRWISE_SYSTEM_PROMPT = '''I require a leaderboard for various large language models. I'll provide you with prompts given to these models and their corresponding outputs. Your task is to assess these responses, and select the model that produces the best output from a human perspective.

## Instruction

{{
    "instruction": """{prompt}""",
}}

## Model Outputs

Here are the unordered outputs from the models. Each output is associated with a specific model, identified by a unique model identifier.

{{
    {{
        "model_identifier": "0",
        "output": """{response0}"""
    }},
    {{
        "model_identifier": "1",
        "output": """{response1}"""
    }}
}}

## Task

Evaluate the models on the basis of the quality and relevance of their results, and select the model that generated the best result. Reply with the identifier of the best model. Our evaluation will only take into account the first character of your answer, so make sure it contains only one of the identifiers and nothing else (no quotation marks, no spaces, no new lines, ...).
'''


class JudgeBackendMissingError(ValueError):
    """A judge's backend package is not installed."""


def _require(module: str, package: str, judge: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != module.split(".")[0]:
            raise
        raise JudgeBackendMissingError(
            f"{judge} needs the `{package}` package, which is not installed (no module {exc.name!r}). "
            f"Install it with `pip install {package}`."
        ) from exc


class BaseJudge(ABC):
    """A judge: `judge(prompts, completions, shuffle_order=True) -> list`."""

    @abstractmethod
    def judge(self, prompts: list[str], completions: list[str], shuffle_order: bool = True) -> list:
        raise NotImplementedError("Judge subclasses must implement the `judge` method.")


class BaseRankJudge(ABC):
    """Ranks several completions per prompt: `[[1, 2, 0], ...]` (best first). Not a `BaseJudge`, as in TRL."""

    @abstractmethod
    def judge(self, prompts: list[str], completions: list[list[str]], shuffle_order: bool = True) -> list[list[int]]:
        raise NotImplementedError("Judge subclasses must implement the `judge` method.")


class BasePairwiseJudge(BaseJudge):
    """Picks the better of two completions per prompt: the index 0 or 1, or -1 when the judge failed."""

    @abstractmethod
    def judge(self, prompts: list[str], completions: list[list[str]], shuffle_order: bool = True) -> list[int]:
        raise NotImplementedError("Judge subclasses must implement the `judge` method.")


class BaseBinaryJudge(BaseJudge):
    """Says whether each completion meets a constraint: 1 yes, 0 no, -1 the judge failed (CGPO, arXiv 2409.20370)."""

    @abstractmethod
    def judge(self, prompts: list[str], completions: list[str], gold_completions: list[str] | None = None,
              shuffle_order: bool = True) -> list[int]:
        raise NotImplementedError("Judge subclasses must implement the `judge` method.")


def _flip_mask(n: int) -> Any:
    import numpy as np

    return np.random.choice([True, False], size=n)


def _pairwise(prompts: list[str], completions: list[list[str]], shuffle_order: bool,
              ask: Callable[[str], str | None], system_prompt: str) -> list[int]:
    """The pairwise protocol of TRL's API judges: optional flip, one 1-token question per pair (threads), unflip."""
    flips = _flip_mask(len(prompts)) if shuffle_order else None
    if flips is not None:
        completions = [pair[::-1] if flip else pair for flip, pair in zip(flips, completions, strict=True)]

    def rank(prompt: str, pair: list[str]) -> int:
        answer = ask(system_prompt.format(prompt=prompt, response0=pair[0], response1=pair[1]))
        if answer in ("0", "1"):
            return int(answer)
        logger.debug(f"Invalid response from the judge model: '{answer}'. Returning -1.")
        return -1

    with concurrent.futures.ThreadPoolExecutor() as pool:
        ranks = list(pool.map(rank, prompts, completions))
    if flips is not None:
        # as in TRL: a flipped -1 comes back as 2
        ranks = [1 - r if flip else r for r, flip in zip(ranks, flips)]
    return ranks


class HfPairwiseJudge(BasePairwiseJudge):
    """Pairwise judge through `huggingface_hub.InferenceClient(model, token).chat_completion(..., max_tokens=1)`.

    `system_prompt` must hold `{prompt}`, `{response0}`, `{response1}` and ask for a one-token answer.
    """

    def __init__(self, model: str = "meta-llama/Meta-Llama-3-70B-Instruct", token: str | None = None,
                 system_prompt: str | None = None) -> None:
        hub = _require("huggingface_hub", "huggingface_hub", "HfPairwiseJudge")
        self.client = hub.InferenceClient(model=model, token=token)
        self.system_prompt = system_prompt or DEFAULT_PAIRWISE_SYSTEM_PROMPT

    def judge(self, prompts: list[str], completions: list[list[str]], shuffle_order: bool = True) -> list[int]:
        def ask(content: str) -> str | None:
            out = self.client.chat_completion(messages=[{"role": "user", "content": content}], max_tokens=1)
            return out.choices[0].message.content

        return _pairwise(prompts, completions, shuffle_order, ask, self.system_prompt)


class OpenAIPairwiseJudge(BasePairwiseJudge):
    """Pairwise judge through `openai.OpenAI().chat.completions.create(model, ..., max_tokens=1)`.

    After `max_requests` prompts (None: no cap) every call returns -1s, with one warning.
    """

    def __init__(self, model: str = "gpt-4-turbo-preview", system_prompt: str | None = None,
                 max_requests: int | None = 1_000) -> None:
        openai = _require("openai", "openai", "OpenAIPairwiseJudge")
        self.client = openai.OpenAI()
        self.model = model
        self.system_prompt = system_prompt or DEFAULT_PAIRWISE_SYSTEM_PROMPT
        self.max_requests = max_requests
        self.num_requests = 0
        self._warned = False

    def judge(self, prompts: list[str], completions: list[list[str]], shuffle_order: bool = True) -> list[int]:
        if self.max_requests is not None and self.num_requests >= self.max_requests:
            if not self._warned:
                logger.warning(
                    f"Reached the maximum number of requests ({self.max_requests}). From now on, returning -1 instead. "
                    " To increase the limit, set `max_requests` to a higher value, or to `None` for no limit."
                )
                self._warned = True
            return [-1] * len(prompts)

        def ask(content: str) -> str | None:
            out = self.client.chat.completions.create(model=self.model, max_tokens=1,
                                                      messages=[{"role": "user", "content": content}])
            return out.choices[0].message.content

        ranks = _pairwise(prompts, completions, shuffle_order, ask, self.system_prompt)
        self.num_requests += len(prompts)
        return ranks


class PairRMJudge(BasePairwiseJudge):
    """Pairwise judge with AllenAI's PairRM through `llm_blender` (on the accelerate device).

    `judge(..., return_scores=True, temperature=1.0)` gives the softmax probability of the first completion instead
    of the 0/1 index. llm-blender works with transformers < 5 only; TRL 1.0 raised for transformers >= 5, and so
    does this copy.
    """

    def __init__(self) -> None:
        _require("llm_blender", "llm-blender", "PairRMJudge")  # a missing package first, before the version check
        import transformers
        from packaging.version import Version

        if Version(transformers.__version__) >= Version("5.0.0"):
            raise RuntimeError(
                "llm-blender currently supports transformers < 5.0.0. Please install a compatible version: "
                "`pip install 'transformers<5.0.0'`. Check the issue tracker for updates: "
                "https://github.com/huggingface/trl/issues/4918"
            )
        import llm_blender
        from accelerate import Accelerator

        self.blender = llm_blender.Blender()
        self.blender.loadranker("llm-blender/PairRM", device=Accelerator().device)

    def judge(self, prompts: list[str], completions: list[list[str]], shuffle_order: bool = True,
              return_scores: bool = False, temperature: float = 1.0) -> list[int | float]:
        import numpy as np

        if len(completions[0]) != 2:
            raise ValueError("PairRM judge requires exactly 2 completions per prompt.")
        flips = _flip_mask(len(prompts)) if shuffle_order else None
        if flips is not None:
            completions = [pair[::-1] if flip else pair for flip, pair in zip(flips, completions, strict=True)]
        ranks = self.blender.rank(prompts, completions, return_scores=return_scores, disable_tqdm=True)
        ranks = ranks / temperature if return_scores else ranks - 1  # PairRM ranks are 1-based
        if flips is not None:
            ranks[flips] = ranks[flips][:, ::-1]
        if not return_scores:
            return ranks[:, 0].tolist()
        shifted = np.exp(ranks - np.amax(ranks, axis=-1, keepdims=True))
        return (shifted / np.sum(shifted, axis=-1, keepdims=True))[:, 0].tolist()


class AllTrueJudge(BaseBinaryJudge):
    """Mixture of binary judges (CGPO): 1 when every judge says 1, -1 when any failed (-1), else 0."""

    def __init__(self, judges: list[BaseBinaryJudge]) -> None:
        self.judges = judges

    def judge(self, prompts: list[str], completions: list[str], gold_completions: list[str] | None = None,
              shuffle_order: bool = True) -> list[int]:
        votes = [j.judge(prompts, completions, gold_completions, shuffle_order) for j in self.judges]
        out = []
        for per_prompt in zip(*votes, strict=True):
            if any(v not in {0, 1, -1} for v in per_prompt):
                raise ValueError(f"Invalid binary judgment: {per_prompt}, expected list of values in {{0, 1, -1}}.")
            out.append(-1 if -1 in per_prompt else int(all(v == 1 for v in per_prompt)))
        return out
