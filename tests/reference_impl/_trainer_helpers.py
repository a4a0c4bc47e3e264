"""Shared pieces of the reference trainer tests: tiny datasets, common config kwargs, one-step runners.

Everything is built in-process (compat.tiny): no downloads. Importing this module sets the Hugging Face offline and
telemetry switches before transformers/TRL are imported, so no test ever touches the network.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("CI", "1")  # TRL skips its telemetry ping under CI

import functools
import math
from typing import Any

import datasets
import torch

torch.set_num_threads(1)  # 2 shared cores: one thread per test worker avoids oversubscription
datasets.disable_progress_bars()

WORDS = "the movie was great good bad terrible fun plot story i you we not very really".split()


@functools.lru_cache(maxsize=2)
def _tokenizer_cached(padding_side: str) -> Any:
    from compat.tiny import tiny_tokenizer

    return tiny_tokenizer(padding_side=padding_side)


def tokenizer(padding_side: str = "left") -> Any:
    """A fresh copy of the shared tiny tokenizer (trainers mutate pad token / padding side)."""
    import copy

    return copy.deepcopy(_tokenizer_cached(padding_side))


def model(kind: str = "causal-lm", seed: int = 0, vocab_size: int = 512, **overrides: Any) -> Any:
    from compat.tiny import tiny_model

    m = tiny_model(kind, "llama", vocab_size=vocab_size, seed=seed, **overrides)
    if kind == "sequence-classification":
        m.config.pad_token_id = 0
    return m


def text(i: int, n: int = 6) -> str:
    return " ".join(WORDS[(i * 3 + k) % len(WORDS)] for k in range(n))


def lm_dataset(n: int = 4) -> Any:
    from datasets import Dataset

    return Dataset.from_dict({"text": [text(i, 5 + i % 3) for i in range(n)]})


def prompt_completion_dataset(n: int = 4, conversational: bool = False) -> Any:
    from datasets import Dataset

    prompts = [text(i, 3 + i % 2) for i in range(n)]
    completions = [" " + text(i + 7, 2 + i % 3) for i in range(n)]
    if conversational:
        return Dataset.from_dict({
            "prompt": [[{"role": "user", "content": p}] for p in prompts],
            "completion": [[{"role": "assistant", "content": c.strip()}] for c in completions],
        })
    return Dataset.from_dict({"prompt": prompts, "completion": completions})


def preference_dataset(n: int = 4, conversational: bool = False) -> Any:
    from datasets import Dataset

    prompts = [text(i, 3 + i % 2) for i in range(n)]
    chosen = [" " + text(i + 5, 2 + i % 3) for i in range(n)]
    rejected = [" " + text(i + 9, 3 + (i + 1) % 3) for i in range(n)]
    if conversational:
        def msg(role: str, c: str) -> list[dict[str, str]]:
            return [{"role": role, "content": c.strip()}]

        return Dataset.from_dict({
            "prompt": [msg("user", p) for p in prompts],
            "chosen": [msg("assistant", c) for c in chosen],
            "rejected": [msg("assistant", r) for r in rejected],
        })
    return Dataset.from_dict({"prompt": prompts, "chosen": chosen, "rejected": rejected})


def unpaired_dataset(n: int = 4) -> Any:
    from datasets import Dataset

    return Dataset.from_dict({
        "prompt": [text(i, 3 + i % 2) for i in range(n)],
        "completion": [" " + text(i + 5, 2 + i % 3) for i in range(n)],
        "label": [i % 2 == 0 for i in range(n)],
    })


def prompt_only_dataset(n: int = 2, conversational: bool = False) -> Any:
    from datasets import Dataset

    prompts = [text(i, 3 + i % 2) for i in range(n)]
    if conversational:
        return Dataset.from_dict({"prompt": [[{"role": "user", "content": p}] for p in prompts]})
    return Dataset.from_dict({"prompt": prompts})


def config_kwargs(tmp_path: Any, **overrides: Any) -> dict[str, Any]:
    """Kwargs every config accepts: CPU, fp32, no checkpointing, no saving, log every step."""
    kwargs: dict[str, Any] = dict(
        output_dir=str(tmp_path), per_device_train_batch_size=2, max_steps=1, logging_steps=1,
        learning_rate=1e-3, report_to="none", use_cpu=True, bf16=False, gradient_checkpointing=False,
        save_strategy="no", seed=0, disable_tqdm=True, max_grad_norm=1e9, dataloader_num_workers=0,
    )
    kwargs.update(overrides)
    return kwargs


def first_log(trainer: Any) -> dict[str, float]:
    """Train and return the first logged step (loss, grad_norm, metrics)."""
    trainer.train()
    logs = [h for h in trainer.state.log_history if "loss" in h]
    assert logs, trainer.state.log_history
    return logs[0]


def train_two_steps(trainer: Any, lora: bool = False) -> set[str]:
    """Train (configured for 2 steps): both logged steps finite, some parameter moved, with LoRA only adapters (and
    a classification head) moved. Returns the names of the parameters that moved."""
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    trainer.train()
    logs = [h for h in trainer.state.log_history if "loss" in h]
    assert len(logs) == 2 and all(math.isfinite(h["loss"]) and math.isfinite(h["grad_norm"]) for h in logs), logs
    changed = {n for n, p in trainer.model.named_parameters() if not torch.equal(before[n], p.detach())}
    assert changed, "no parameter moved"
    if lora:
        assert all("lora_" in n or "score" in n for n in changed), sorted(changed)[:5]
    return changed


def assert_close(ours: float, theirs: float, tol: float = 1e-4, what: str = "") -> None:
    assert math.isfinite(ours) and math.isfinite(theirs), (what, ours, theirs)
    assert abs(ours - theirs) <= tol * max(1.0, abs(theirs)), f"{what}: ours={ours!r} trl={theirs!r}"


def trl_1_16() -> Any:
    """Import TRL, skipping the test unless the installed TRL is the 1.16 line the parity oracle targets."""
    import pytest

    trl = pytest.importorskip("trl")
    if not trl.__version__.startswith("1.16."):
        pytest.skip(f"parity oracle is TRL 1.16; installed trl {trl.__version__}")
    return trl


def lora_config(**overrides: Any) -> Any:
    from peft import LoraConfig

    kwargs: dict[str, Any] = dict(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], lora_dropout=0.0)
    kwargs.update(overrides)
    return LoraConfig(**kwargs)


def fixed_completions(prompt_ids: list[list[int]], max_len: int = 6, eos_token_id: int = 1) -> list[list[int]]:
    """Deterministic 'generations' keyed on the prompt and its repeat index, so ours and TRL see the same rollouts.

    Like real sampling: a completion either ends with EOS (2..max_len-1 tokens) or runs to `max_len` (truncated).
    """
    seen: dict[tuple[int, ...], int] = {}
    out = []
    for ids in prompt_ids:
        key = tuple(ids)
        j = seen.get(key, 0)
        seen[key] = j + 1
        ends = (sum(ids) + j) % 2 == 0
        length = 2 + (sum(ids) + 3 * j) % (max_len - 2) if ends else max_len
        tokens = [8 + (sum(ids) * 7 + 31 * j + 13 * k) % 480 for k in range(length)]
        if ends:
            tokens[-1] = eos_token_id
        out.append(tokens)
    return out


def reward_len(completions: list, **kwargs: Any) -> list[float]:
    """A sync reward: longer completions score higher (works on text and conversational completions)."""
    def text_of(c: Any) -> str:
        return c if isinstance(c, str) else c[0]["content"]

    return [float(len(text_of(c))) / 10.0 for c in completions]


async def reward_vowels(completions: list, **kwargs: Any) -> list[float]:
    """An async reward: fraction of vowels."""
    def text_of(c: Any) -> str:
        return c if isinstance(c, str) else c[0]["content"]

    return [sum(ch in "aeiou" for ch in text_of(c)) / max(1, len(text_of(c))) for c in completions]


def grad_norm(model: Any) -> float:
    """Total L2 norm of the gradients of `model`'s trainable parameters."""
    import torch

    grads = [p.grad.detach().float().norm() for p in model.parameters() if p.grad is not None]
    return float(torch.stack(grads).norm()) if grads else 0.0


def loss_and_grad_norm(trainer: Any, inputs: Any) -> tuple[float, float]:
    """One forward/backward of `trainer.compute_loss` on prepared `inputs`: (loss, grad norm); grads cleared after."""
    trainer.model.train()
    trainer.model.zero_grad(set_to_none=True)
    loss = trainer.compute_loss(trainer.model, inputs)
    loss.backward()
    norm = grad_norm(trainer.model)
    trainer.model.zero_grad(set_to_none=True)
    return float(loss.detach()), norm
