"""What the online trainers (GRPO, RLOO, Online DPO, A2PO) share: rewards, generation, sampling, scoring.

- `RewardFunctions`: TRL's `reward_funcs` contract. Each entry is a callable (sync or `async def`, called as
  `f(prompts=..., completions=..., completion_ids=..., **dataset_columns, trainer_state=..., log_extra=...,
  log_metric=...)`, may return `None` per sample), a model id/path (loaded as `AutoModelForSequenceClassification`
  with `num_labels=1`), or a `PreTrainedModel` for sequence classification (scored on prompt+completion text,
  reward = `logits[:, 0]`). A list mixes them; `reward_weights` weighs them.
- `RepeatSampler`: each prompt repeated `num_generations` times, the same shuffled order on every process, so a
  prompt's group is complete across processes (TRL's sampler, same permutation for the same seed).
- `_OnlineTrainer`: prompt tokenisation (chat templates for conversational prompts), generation with
  `model.generate` or a vLLM server (`_vllm.VLLMServerClient`), the completion mask (up to and including the first
  EOS), and per-token log-probs of completions through the chunked engine. `_generate_completions` is the single
  place generation happens, so tests (and users with custom rollouts) can override it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import inspect
from collections.abc import Iterator, Sequence
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader, Sampler

from . import _data, _model
from ._base import _BaseTrainer


# ------------------------------------------------------------------------------------------------------- sampling
class RepeatSampler(Sampler[int]):
    """Yield each index `mini_repeat_count` times in a row; chunks of `batch_size` unique indices repeated
    `repeat_count` times (generation reuse). Incomplete trailing chunks are dropped. TRL's `RepeatSampler`."""

    def __init__(self, data_source: Any, mini_repeat_count: int, batch_size: int = 1, repeat_count: int = 1,
                 shuffle: bool = True, seed: int | None = None) -> None:
        self.num_samples = len(data_source)
        self.mini_repeat_count, self.batch_size, self.repeat_count = mini_repeat_count, batch_size, repeat_count
        self.shuffle = shuffle
        self.generator = torch.Generator()
        if shuffle and seed is not None:
            self.generator.manual_seed(seed)

    def __iter__(self) -> Iterator[int]:
        order = (torch.randperm(self.num_samples, generator=self.generator).tolist() if self.shuffle
                 else list(range(self.num_samples)))
        chunks = [order[i : i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        for chunk in (c for c in chunks if len(c) == self.batch_size):
            for _ in range(self.repeat_count):
                for index in chunk:
                    yield from [index] * self.mini_repeat_count

    def __len__(self) -> int:
        return (self.num_samples // self.batch_size) * self.batch_size * self.mini_repeat_count * self.repeat_count


def nanstd(x: torch.Tensor, dim: int | None = None, keepdim: bool = False) -> torch.Tensor:
    """Unbiased standard deviation ignoring NaNs (TRL's `nanstd`)."""
    mean = torch.nanmean(x, dim=dim, keepdim=True)
    var = torch.nanmean((x - mean) ** 2, dim=dim, keepdim=keepdim)
    count = (~torch.isnan(x)).sum(dim=dim, keepdim=keepdim) if dim is not None else (~torch.isnan(x)).sum()
    return (var * count / (count - 1)).sqrt()


# -------------------------------------------------------------------------------------------------------- rewards
def _callable_name(func: Any) -> str:
    name = getattr(func, "__name__", None)
    if name is None and hasattr(func, "func"):  # functools.partial
        return _callable_name(func.func)
    return name or type(func).__name__


def _is_async(func: Any) -> bool:
    target = func.func if hasattr(func, "func") and not inspect.isfunction(func) else func
    return inspect.iscoroutinefunction(target) or inspect.iscoroutinefunction(getattr(target, "__call__", None))


class RewardFunctions:
    """The reward sources of an online trainer, normalised to a list, with names, tokenizers and weights."""

    def __init__(self, reward_funcs: Any, reward_processing_classes: Any, args: Any,
                 weights: Sequence[float] | None = None) -> None:
        from transformers import AutoTokenizer

        funcs = [] if reward_funcs is None else list(reward_funcs) if isinstance(reward_funcs, list) else [reward_funcs]
        self.names: list[str] = []
        for i, func in enumerate(funcs):
            if isinstance(func, str):
                funcs[i] = _model.load_causal_lm(func, args, kind="sequence-classification")
                self.names.append(func.split("/")[-1])
            elif isinstance(func, nn.Module):
                self.names.append(str(getattr(func.config, "_name_or_path", "") or type(func).__name__).split("/")[-1])
            elif callable(func):
                self.names.append(_callable_name(func))
            else:
                raise TypeError(f"reward_funcs[{i}] must be a callable, a model id/path or a PreTrainedModel; "
                                f"got {type(func).__name__}.")
        self.funcs = funcs
        if weights is not None and len(weights) != len(funcs):
            raise ValueError(f"Number of reward weights ({len(weights)}) must match number of reward functions "
                             f"({len(funcs)})")
        self.weights = torch.tensor(list(weights) if weights is not None else [1.0] * len(funcs), dtype=torch.float32)
        if reward_processing_classes is None:
            reward_processing_classes = [None] * len(funcs)
        elif not isinstance(reward_processing_classes, list):
            reward_processing_classes = [reward_processing_classes]
        if len(reward_processing_classes) != len(funcs):
            raise ValueError(f"The number of reward processing classes ({len(reward_processing_classes)}) must match "
                             f"the number of reward functions ({len(funcs)}).")
        for i, (tok, func) in enumerate(zip(reward_processing_classes, funcs)):
            if isinstance(func, nn.Module):
                if tok is None:
                    tok = AutoTokenizer.from_pretrained(func.config._name_or_path,
                                                        trust_remote_code=args.trust_remote_code)
                if tok.pad_token_id is None:
                    tok.pad_token = tok.eos_token
                config = func.config.get_text_config() if hasattr(func.config, "get_text_config") else func.config
                config.pad_token_id = tok.pad_token_id
                func.requires_grad_(False)
                func.eval()
                reward_processing_classes[i] = tok
        self.processing_classes = reward_processing_classes

    def __len__(self) -> int:
        return len(self.funcs)

    def modules(self) -> list[nn.Module]:
        return [f for f in self.funcs if isinstance(f, nn.Module)]

    def __call__(self, inputs: list[dict[str, Any]], prompts: list, completions: list,
                 completion_ids: list[list[int]], device: torch.device, extra_kwargs: dict[str, Any],
                 chat_template_kwargs: dict[str, Any] | None = None) -> torch.Tensor:
        """`[N, num_funcs]` float32 rewards (NaN where a function returned None), local to this process."""
        n = len(prompts)
        out = torch.zeros(n, len(self.funcs), device=device)
        keys = [k for k in inputs[0] if k not in ("prompt", "completion", "completion_ids")]
        kwargs = {k: [ex[k] for ex in inputs] for k in keys}
        kwargs.update(extra_kwargs)
        pending = []
        for i, (func, tok, name) in enumerate(zip(self.funcs, self.processing_classes, self.names)):
            if isinstance(func, nn.Module):
                if prompts and _data.is_conversational({"prompt": prompts[0]}):
                    texts = [tok.apply_chat_template(p + c, tokenize=False, **(chat_template_kwargs or {}))
                             for p, c in zip(prompts, completions)]
                else:
                    texts = [p + c for p, c in zip(prompts, completions)]
                enc = tok(text=texts, return_tensors="pt", padding=True, padding_side="right",
                          add_special_tokens=False).to(device)
                with torch.inference_mode():
                    out[:, i] = func(**enc).logits[:, 0].float()
            elif _is_async(func):
                pending.append((i, func, name))
            else:
                out[:, i] = self._to_tensor(func(prompts=prompts, completions=completions,
                                                 completion_ids=completion_ids, **kwargs), n, name, device)
        if pending:
            async def run_all() -> list:
                return await asyncio.gather(*(f(prompts=prompts, completions=completions,
                                                completion_ids=completion_ids, **kwargs) for _, f, _ in pending))

            # A fresh event loop in a worker thread works whether or not the caller already runs a loop.
            with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
                results = pool.submit(asyncio.run, run_all()).result()
            for (i, _, name), values in zip(pending, results):
                out[:, i] = self._to_tensor(values, n, name, device)
        return out

    @staticmethod
    def _to_tensor(values: Sequence[float | None], n: int, name: str, device: torch.device) -> torch.Tensor:
        values = [float("nan") if v is None else float(v) for v in values]
        if len(values) != n:
            raise ValueError(f"The reward function '{name}' returned {len(values)} rewards, but {n} were expected "
                             "(one per prompt-completion pair).")
        return torch.tensor(values, dtype=torch.float32, device=device)


# ----------------------------------------------------------------------------------------------------- generation
def eos_token_ids(tokenizer: Any, model: nn.Module) -> list[int]:
    """The tokenizer's EOS plus every EOS the model's generation config declares (TRL >= 1.15)."""
    gen_config = getattr(_model.causal_lm(model), "generation_config", None)
    ids = getattr(gen_config, "eos_token_id", None)
    ids = [] if ids is None else [ids] if isinstance(ids, int) else list(ids)
    if tokenizer.eos_token_id is not None and tokenizer.eos_token_id not in ids:
        ids = [tokenizer.eos_token_id, *ids]
    return ids


@contextlib.contextmanager
def unwrap_for_generation(trainer: Any, gather_zero3: bool = True) -> Iterator[nn.Module]:
    """The bare model for `generate`: accelerate-unwrapped, ZeRO-3 parameters gathered, checkpointing off."""
    unwrapped = trainer.accelerator.unwrap_model(trainer.model_wrapped)
    ctx: Any = contextlib.nullcontext()
    if trainer.is_deepspeed_enabled and gather_zero3:
        import deepspeed

        if getattr(trainer.accelerator.state.deepspeed_plugin, "zero_stage", 0) == 3:
            ctx = deepspeed.zero.GatheredParameters(list(unwrapped.parameters()))
    with ctx, _model.no_gradient_checkpointing(unwrapped, trainer.args), torch.no_grad():
        yield unwrapped


class _OnlineTrainer(_BaseTrainer):
    """Shared generation/scoring machinery; subclasses implement `_generate_and_score` and `compute_loss`."""

    def _setup_online(self, model: nn.Module, tokenizer: Any, args: Any, *, max_new_tokens: int,
                      temperature: float, top_p: float = 1.0, top_k: int | None = 0, min_p: float | None = None,
                      repetition_penalty: float = 1.0) -> None:
        from transformers import GenerationConfig

        self._tokenizer = tokenizer
        self.eos_token_ids = eos_token_ids(tokenizer, model)
        self.temperature = temperature
        self.chat_template_kwargs = dict(getattr(args, "chat_template_kwargs", None) or {})
        gen_kwargs = {
            "max_new_tokens": max_new_tokens, "do_sample": True, "pad_token_id": tokenizer.pad_token_id,
            "bos_token_id": tokenizer.bos_token_id, "eos_token_id": self.eos_token_ids, "temperature": temperature,
            "top_p": top_p, "top_k": top_k, "min_p": min_p, "repetition_penalty": repetition_penalty,
            "cache_implementation": getattr(args, "cache_implementation", None),
        }
        gen_kwargs.update(getattr(args, "generation_kwargs", None) or {})
        self.generation_config = GenerationConfig(**gen_kwargs)
        self.vllm_client = None
        if getattr(args, "use_vllm", False):
            from ._vllm import VLLMServerClient

            self.vllm_client = VLLMServerClient.from_args(args)

    # ---------------------------------------------------------------------------------------------- prompts
    def _tokenize_prompts(self, prompts: list) -> list[list[int]]:
        tok = self._tokenizer
        if prompts and _data.is_conversational({"prompt": prompts[0]}):
            out = tok.apply_chat_template(conversation=prompts, add_generation_prompt=True, tokenize=True,
                                          return_dict=True, **self.chat_template_kwargs)
            return [list(ids) for ids in out["input_ids"]]
        return [list(ids) for ids in tok(text=prompts)["input_ids"]]

    def _decode(self, completion_ids: list[list[int]], prompts: list) -> list:
        texts = self._tokenizer.batch_decode(completion_ids, skip_special_tokens=True)
        if prompts and _data.is_conversational({"prompt": prompts[0]}):
            return [[{"role": "assistant", "content": t}] for t in texts]
        return texts

    # ------------------------------------------------------------------------------------------- generation
    def _generate_completions(self, prompt_ids: list[list[int]], generation_config: Any = None,
                              model: nn.Module | None = None) -> tuple[list[list[int]], list[list[float]] | None]:
        """Completion token ids (cut after the first EOS) for each prompt, and their sampling log-probs when the
        backend returns them (vLLM). `model` (default: the policy) is e.g. A2PO's reference. The one place
        generation happens: override it for custom rollouts."""
        generation_config = generation_config or self.generation_config
        if model is not None and model is not self.model:
            return self._generate_with(self.accelerator.unwrap_model(model), prompt_ids, generation_config), None
        if self.vllm_client is not None:
            self.vllm_client.maybe_sync_weights(self)
            return self.vllm_client.generate(prompt_ids, generation_config)
        with unwrap_for_generation(self, getattr(self.args, "ds3_gather_for_generation", True)) as unwrapped:
            return self._generate_with(unwrapped, prompt_ids, generation_config), None

    def _generate_with(self, model: nn.Module, prompt_ids: list[list[int]], generation_config: Any
                       ) -> list[list[int]]:
        device = self.accelerator.device
        ids = _data.pad_lists(prompt_ids, self._tokenizer.pad_token_id, "left").to(device)
        mask = _data.pad_lists([[1] * len(p) for p in prompt_ids], 0, "left").to(device)
        with torch.no_grad():
            out = model.generate(input_ids=ids, attention_mask=mask, generation_config=generation_config)
        completion = out[:, ids.size(1):]
        keep = _data.completion_mask_after_eos(completion, self.eos_token_ids).bool()
        return [c[m].tolist() for c, m in zip(completion.cpu(), keep.cpu())]

    def _pad_completions(self, prompt_ids: list[list[int]], completion_ids: list[list[int]]
                         ) -> dict[str, torch.Tensor]:
        device, pad_id = self.accelerator.device, self._tokenizer.pad_token_id
        multiple = getattr(self.args, "pad_to_multiple_of", None)
        return {
            "prompt_ids": _data.pad_lists(prompt_ids, pad_id, "left", pad_to_multiple_of=multiple).to(device),
            "prompt_mask": _data.pad_lists([[1] * len(p) for p in prompt_ids], 0, "left",
                                           pad_to_multiple_of=multiple).to(device),
            "completion_ids": _data.pad_lists(completion_ids, pad_id, pad_to_multiple_of=multiple).to(device),
            "completion_mask": _data.pad_lists([[1] * len(c) for c in completion_ids], 0,
                                               pad_to_multiple_of=multiple).to(device),
        }

    def _log_completion_lengths(self, prompt_ids: list[list[int]], completion_ids: list[list[int]]) -> None:
        mode, device = self._mode, self.accelerator.device
        lengths = self.accelerator.gather(torch.tensor([len(c) for c in completion_ids], device=device))
        prompt_lengths = self.accelerator.gather(torch.tensor([len(p) for p in prompt_ids], device=device))
        if mode == "train":
            self.state.num_input_tokens_seen += (prompt_lengths.sum() + lengths.sum()).item()
        self._metrics[mode]["num_tokens"] = [self.state.num_input_tokens_seen]
        self._metrics[mode]["completions/mean_length"].append(lengths.float().mean().item())
        self._metrics[mode]["completions/min_length"].append(lengths.float().min().item())
        self._metrics[mode]["completions/max_length"].append(lengths.float().max().item())
        stop = [*self.eos_token_ids, self._tokenizer.pad_token_id]
        truncated = self.accelerator.gather(torch.tensor([not c or c[-1] not in stop for c in completion_ids],
                                                         device=device))
        self._metrics[mode]["completions/clipped_ratio"].append(truncated.float().mean().item())
        term = lengths[~truncated].float()
        term = term if term.numel() else torch.zeros(1, device=device)
        self._metrics[mode]["completions/mean_terminated_length"].append(term.mean().item())
        self._metrics[mode]["completions/min_terminated_length"].append(term.min().item())
        self._metrics[mode]["completions/max_terminated_length"].append(term.max().item())

    # ---------------------------------------------------------------------------------------------- scoring
    def _completion_stats(self, model: nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                          logits_to_keep: int, outputs: tuple[str, ...] = ("logp",),
                          batch_size: int | None = None, temperature: float | None = None) -> dict[str, torch.Tensor]:
        """Per-token statistics `[B, logits_to_keep]` of the last `logits_to_keep` tokens (the completion).

        `temperature` defaults to the sampling temperature (GRPO/RLOO); Online DPO and A2PO score at 1.0 like TRL.
        """
        batch_size = batch_size or input_ids.size(0)
        temperature = self.temperature if temperature is None else temperature
        parts: list[dict[str, torch.Tensor]] = []
        for start in range(0, input_ids.size(0), batch_size):
            ids, mask = input_ids[start : start + batch_size], attention_mask[start : start + batch_size]
            labels = ids.masked_fill(mask == 0, -100)
            labels[:, :-logits_to_keep] = -100
            stats = _model.forward_token_stats(model, ids, mask, labels, outputs=outputs, temperature=temperature)
            parts.append({k: v[:, -logits_to_keep:] for k, v in stats.items() if k != "mask"})
        return {k: torch.cat([p[k] for p in parts]) for k in parts[0]}

    def _reward_extra_kwargs(self) -> dict[str, Any]:
        return {"trainer_state": self.state, "log_extra": lambda column, values: None,
                "log_metric": lambda name, value: self._metrics[self._mode][name].append(float(value))}

    def _log_rewards(self, rewards_per_func: torch.Tensor, weights: torch.Tensor) -> None:
        mode = self._mode
        for i, name in enumerate(self.reward_functions.names):
            self._metrics[mode][f"rewards/{name}/mean"].append(torch.nanmean(rewards_per_func[:, i]).item())
            self._metrics[mode][f"rewards/{name}/std"].append(nanstd(rewards_per_func[:, i]).item())
        unscorable = torch.isnan(rewards_per_func).all(dim=1)
        rewards = (rewards_per_func * weights.to(rewards_per_func.device).unsqueeze(0)).nansum(dim=1)
        rewards[unscorable] = torch.nan
        self._metrics[mode]["reward"].append(torch.nanmean(rewards).item())
        self._metrics[mode]["reward_std"].append(nanstd(rewards).item())


class _GroupedOnlineTrainer(_OnlineTrainer):
    """GRPO/RLOO data flow: repeated prompts, generation every `steps_per_generation * num_iterations` steps,
    the generation batch split into `steps_per_generation` micro-batches and reused `num_iterations` times."""

    def get_train_dataloader(self) -> DataLoader:
        args = self.args
        sampler = RepeatSampler(
            self.train_dataset, mini_repeat_count=self.num_generations,
            batch_size=args.generation_batch_size // self.num_generations,
            repeat_count=self.num_iterations * args.steps_per_generation,
            shuffle=args.shuffle_dataset, seed=args.seed,
        )
        loader = DataLoader(self.train_dataset, batch_size=self._train_batch_size * args.steps_per_generation,
                            sampler=sampler, collate_fn=self.data_collator, num_workers=args.dataloader_num_workers,
                            pin_memory=args.dataloader_pin_memory)
        return self.accelerator.prepare(loader)

    def _get_eval_sampler(self, eval_dataset: Any) -> Sampler:
        return RepeatSampler(eval_dataset, mini_repeat_count=self.num_generations_eval, seed=self.args.seed)

    def _prepare_inputs(self, generation_batch: Any) -> dict[str, Any]:
        if self._mode == "eval":
            return self._generate_and_score(generation_batch)
        args = self.args
        generate_every = args.steps_per_generation * self.num_iterations
        if self._step % generate_every == 0 or self._buffered_inputs is None:
            batch = self._generate_and_score(generation_batch)
            batch = _shuffle_tensor_dict(batch)
            self._buffered_inputs = _split_tensor_dict(batch, args.steps_per_generation)
        return self._buffered_inputs[self._step % args.steps_per_generation]

    def training_step(self, model: nn.Module, inputs: Any, num_items_in_batch: Any = None) -> torch.Tensor:
        loss = super().training_step(model, inputs, num_items_in_batch)
        self._step += 1
        return loss

    def prediction_step(self, model: nn.Module, inputs: Any, prediction_loss_only: bool,
                        ignore_keys: list[str] | None = None) -> tuple:
        inputs = self._prepare_inputs(inputs)
        with torch.no_grad(), self.compute_loss_context_manager():
            loss = self.compute_loss(model, inputs)
        return loss.mean().detach(), None, None

    def _set_signature_columns_if_needed(self) -> None:
        if self._signature_columns is None:
            self._signature_columns = ["prompt"]


def _shuffle_tensor_dict(batch: dict[str, Any]) -> dict[str, Any]:
    """Shuffle the rows of every tensor (and list) in `batch` with one permutation (TRL's `shuffle_sequence_dict`)."""
    n = next(v for v in batch.values() if isinstance(v, torch.Tensor) and v.dim() > 0).size(0)
    perm = torch.randperm(n)
    out = {}
    for k, v in batch.items():
        if isinstance(v, torch.Tensor) and v.dim() > 0 and v.size(0) == n:
            out[k] = v[perm.to(v.device)]
        elif isinstance(v, list) and len(v) == n:
            out[k] = [v[i] for i in perm.tolist()]
        else:
            out[k] = v
    return out


def _split_tensor_dict(batch: dict[str, Any], parts: int) -> list[dict[str, Any]]:
    n = next(v for v in batch.values() if isinstance(v, torch.Tensor) and v.dim() > 0).size(0)
    size = n // parts
    out = []
    for i in range(parts):
        sl = slice(i * size, (i + 1) * size)
        out.append({k: (v[sl] if (isinstance(v, torch.Tensor) and v.dim() > 0 and v.size(0) == n)
                        or (isinstance(v, list) and len(v) == n) else v) for k, v in batch.items()})
    return out


def check_generation_fields(args: Any) -> None:
    """Validate generation/vLLM fields shared by the online configs."""
    if getattr(args, "use_vllm", False) and getattr(args, "vllm_mode", "server") != "server":
        from ._config import UnsupportedFieldError

        raise UnsupportedFieldError(
            f"{type(args).__name__}.vllm_mode={args.vllm_mode!r}: reference_impl talks to a vLLM server through its "
            "OpenAI-compatible HTTP API only; start `vllm serve MODEL` and set vllm_mode='server'."
        )
