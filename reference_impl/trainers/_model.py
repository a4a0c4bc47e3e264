"""Models for the reference trainers: loading, PEFT, reference models, and the engine-backed forward.

The one idea here is `add_engine_head`: it patches a causal LM's `forward` (on the instance) so that
`model(input_ids, attention_mask, engine_fn=fn)` runs the *backbone only* (`model.base_model`, no lm_head, no
`output_hidden_states`), then calls `fn(hidden [B,T,H], weight [V,H], bias)` with the head's weight and returns
whatever `fn` returns. The chunked engine (`reference_impl.chunking`) inside `fn` projects a few tokens at a time,
so the `[B,T,V]` logits never exist. Going through the model's own `forward` (rather than calling the backbone
directly) is what keeps DDP's gradient hooks, FSDP2's parameter all-gather and DeepSpeed ZeRO-3's gather hooks in
play: the head weight is read while the wrapping module's forward is running. Without `engine_fn` the forward is
the original one, so `generate` and everything else are unchanged.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
from torch import nn

ENGINE_FLAG = "_reference_impl_engine_head"


# --------------------------------------------------------------------------------------------------- engine head
def head_scaling(config: Any) -> tuple[float, float | None]:
    """(logit_scale, final_logit_softcapping) the model applies to its logits, read from its text config."""
    text_config = config.get_text_config() if hasattr(config, "get_text_config") else config
    softcap = getattr(text_config, "final_logit_softcapping", None)
    scale = getattr(text_config, "logit_scale", None)
    if scale is None:
        scale = getattr(text_config, "output_multiplier", None)
    if scale is None:
        scale = getattr(text_config, "lm_head_multiplier", None)
    if scale is None and getattr(text_config, "logits_scaling", None) is not None:
        scaling = text_config.logits_scaling
        scale = scaling if getattr(text_config, "model_type", "") == "hyperclovax" else 1.0 / scaling
    return (1.0 if scale is None else float(scale)), softcap


def _full(t: torch.Tensor | None) -> torch.Tensor | None:
    """FSDP2 exposes sharded parameters as DTensors: gather the head once per call."""
    if t is not None and hasattr(t, "full_tensor") and type(t).__name__ == "DTensor":
        return t.full_tensor()
    return t


def add_engine_head(model: nn.Module) -> nn.Module:
    """Patch `model.forward` (instance attribute) to accept `engine_fn=`; idempotent. Returns `model`."""
    if getattr(model, ENGINE_FLAG, False):
        return model
    original_forward = model.forward

    @functools.wraps(type(model).forward)
    def forward(self: nn.Module, *args: Any, engine_fn: Callable[..., Any] | None = None, **kwargs: Any) -> Any:
        if engine_fn is None:
            return original_forward(*args, **kwargs)
        kwargs["use_cache"] = False
        kwargs.pop("labels", None)
        kwargs.pop("logits_to_keep", None)
        backbone = self.base_model if getattr(self, "base_model", self) is not self else self.model
        hidden = backbone(*args, **kwargs).last_hidden_state
        head = self.get_output_embeddings()
        return engine_fn(hidden, _full(head.weight), _full(getattr(head, "bias", None)))

    model.forward = types.MethodType(forward, model)
    setattr(model, ENGINE_FLAG, True)
    return model


def token_logprobs_fn(
    labels: torch.Tensor,
    *,
    outputs: Sequence[str] = ("logp",),
    temperature: float = 1.0,
    logit_scale: float = 1.0,
    softcap: float | None = None,
) -> Callable[[torch.Tensor, torch.Tensor, torch.Tensor | None], dict[str, torch.Tensor]]:
    """An `engine_fn` scoring `labels[:, 1:]` from `hidden[:, :-1]`; -100 labels are skipped (returned as 0).

    Returns a dict of `[B, T-1]` tensors: the requested `outputs` plus `"mask"` (bool, valid positions).
    """

    def fn(hidden: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> dict[str, torch.Tensor]:
        from ._engine import engine_token_stats

        shift_labels = labels[:, 1:].to(hidden.device)
        mask = shift_labels != -100
        h = hidden[:, :-1][mask]
        stats = engine_token_stats(
            h, weight, shift_labels[mask], bias=bias, temperature=temperature, logit_scale=logit_scale,
            softcap=softcap, outputs=tuple(outputs),
        )
        out = {"mask": mask}
        for name, value in stats.items():
            # masked_scatter keeps an all-masked batch connected to the graph (a differentiable zero)
            out[name] = value.new_zeros(mask.shape).masked_scatter(mask, value)
        return out

    return fn


def forward_token_stats(
    model: nn.Module,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    labels: torch.Tensor,
    *,
    outputs: Sequence[str] = ("logp",),
    temperature: float = 1.0,
    **forward_kwargs: Any,
) -> dict[str, torch.Tensor]:
    """Per-token statistics of `labels` under `model` (possibly wrapped by DDP/FSDP/DeepSpeed/PEFT)."""
    scale, softcap = head_scaling(unwrap(model).config)
    fn = token_logprobs_fn(labels, outputs=outputs, temperature=temperature, logit_scale=scale, softcap=softcap)
    return model(input_ids=input_ids, attention_mask=attention_mask, engine_fn=fn, **forward_kwargs)


def unwrap(model: nn.Module) -> nn.Module:
    """Strip DDP/DeepSpeed/compile wrappers (not PEFT)."""
    while hasattr(model, "module") and isinstance(getattr(model, "module"), nn.Module):
        model = model.module
    return getattr(model, "_orig_mod", model)


def causal_lm(model: nn.Module) -> nn.Module:
    """The transformers causal LM inside wrappers and PEFT (the instance `add_engine_head` patches)."""
    model = unwrap(model)
    if is_peft_model(model):
        model = model.get_base_model()
    return model


# ----------------------------------------------------------------------------------------------------------- PEFT
def is_peft_model(model: Any) -> bool:
    try:
        from peft import PeftModel
    except ImportError:
        return False
    return isinstance(unwrap(model), PeftModel)


def apply_peft(model: nn.Module, peft_config: Any, args: Any) -> nn.Module:
    """Wrap `model` with `peft_config` (LoRA and friends), refusing an adapter on the lm_head.

    The engine reads `lm_head.weight` directly, so a LoRA on the head would never be trained: refuse it, like TRL.
    """
    if peft_config is None:
        return model
    try:
        from peft import PeftConfig, get_peft_model
    except ImportError as e:  # pragma: no cover - peft is a dev dependency
        raise ImportError("`peft_config` was passed but `peft` is not installed: pip install peft") from e
    if not isinstance(peft_config, PeftConfig):
        raise TypeError(f"`peft_config` must be a peft.PeftConfig (e.g. LoraConfig), got {type(peft_config).__name__}.")
    if is_peft_model(model):
        raise ValueError("Pass either a PeftModel or a base model with `peft_config`, not both.")
    targets = getattr(peft_config, "target_modules", None) or ()
    if isinstance(targets, str):
        targets = (targets,)
    head_name = _head_name(model)
    if head_name in targets:
        raise ValueError(
            f"A PEFT adapter on the output head ({head_name!r}) is not supported: the engine multiplies hidden states "
            f"by `{head_name}.weight` directly, so the adapter would never train. Remove it from `target_modules` "
            "(or list it in `modules_to_save` to train the full head)."
        )
    peft_model = get_peft_model(model, peft_config)
    if getattr(args, "gradient_checkpointing", False):
        peft_model.enable_input_require_grads()
    return peft_model


def _head_name(model: nn.Module) -> str | None:
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    for name, module in model.named_modules():
        if module is head:
            return name.split(".")[-1]
    return None


@contextlib.contextmanager
def reference_context(model: nn.Module, ref_model: nn.Module | None) -> Iterator[nn.Module]:
    """Yield the module that scores the reference policy.

    A separate `ref_model` is yielded as is. Without one, a PEFT policy is its own reference with the adapters
    disabled (the base weights, or the adapter named "ref" when present, as in TRL).
    """
    if ref_model is not None:
        yield ref_model
        return
    peft_model = unwrap(model)
    if not is_peft_model(peft_model):
        raise ValueError("No reference model: pass `ref_model`, use a PEFT policy, or set beta=0.")
    if "ref" in getattr(peft_model, "peft_config", {}):
        active = peft_model.active_adapter
        peft_model.set_adapter("ref")
        try:
            yield model
        finally:
            peft_model.set_adapter(active)
    else:
        with peft_model.disable_adapter():
            yield model


# ----------------------------------------------------------------------------------------- models and references
def load_causal_lm(model: str | nn.Module, args: Any, kind: str = "causal-lm") -> nn.Module:
    """`model` itself, or `from_pretrained(model, **args.model_init_kwargs)` when it is a name or path."""
    if not isinstance(model, str):
        return model
    from transformers import (
        AutoModelForCausalLM,
        AutoModelForSequenceClassification,
        AutoModelForTokenClassification,
    )

    kwargs = dict(args.model_init_kwargs or {})
    kwargs.setdefault("trust_remote_code", args.trust_remote_code)
    dtype = kwargs.get("dtype", kwargs.get("torch_dtype"))
    if isinstance(dtype, str) and dtype != "auto":
        kwargs.pop("torch_dtype", None)
        kwargs["dtype" if _transformers_major() >= 5 else "torch_dtype"] = getattr(torch, dtype)
    if kind == "sequence-classification":
        kwargs.setdefault("num_labels", 1)
        return AutoModelForSequenceClassification.from_pretrained(model, **kwargs)
    if kind == "token-classification":  # a process reward model: one wrong/correct score per step
        kwargs.setdefault("num_labels", 2)
        return AutoModelForTokenClassification.from_pretrained(model, **kwargs)
    return AutoModelForCausalLM.from_pretrained(model, **kwargs)


@functools.lru_cache(maxsize=1)
def _transformers_major() -> int:
    import transformers

    return int(transformers.__version__.split(".")[0])


def create_reference_model(
    model: nn.Module, num_shared_layers: int | None = None, pattern: str | None = None
) -> nn.Module:
    """A frozen copy of `model` in eval mode; TRL's `create_reference_model` (same signature and behaviour).

    With `num_shared_layers`, the parameters before layer `num_shared_layers` are shared (same storage, frozen in
    both models) instead of copied.
    """
    if _zero3_enabled():
        raise ValueError(
            "DeepSpeed ZeRO-3 is enabled: a deep copy of a partitioned model is not a model. Load the reference with "
            "`AutoModelForCausalLM.from_pretrained()` instead."
        )
    ref_model = copy.deepcopy(model)
    if num_shared_layers is None:
        for p in ref_model.parameters():
            p.requires_grad_(False)
        return ref_model.eval()
    names = [n for n, _ in model.named_parameters()]
    candidates = [pattern.format(layer=num_shared_layers)] if pattern else [
        f"{p}.{num_shared_layers}" for p in ("transformer.h", "model.decoder.layers", "gpt_neox.layers", "model.layers")
    ]
    prefix = next((c for c in candidates if any(c in n for n in names)), None)
    if prefix is None:
        raise ValueError("Layer pattern could not be matched.")
    shared = True
    ref_params = dict(ref_model.named_parameters())
    for name, param in model.named_parameters():
        if prefix in name:
            shared = False
        if shared:
            param.requires_grad_(False)
            _set_param(ref_model, name, param)
        else:
            ref_params[name].requires_grad_(False)
    for p in ref_model.parameters():
        p.requires_grad_(False)
    return ref_model.eval()


def prepare_frozen_model(accelerator: Any, model: nn.Module) -> nn.Module:
    """Prepare a model that is only ever evaluated (reference, teacher, reward model) for `accelerator`.

    `accelerator.prepare_model(model, evaluation_mode=True)`, except under DeepSpeed, where `prepare_model` neither
    partitions a model nor installs ZeRO-3's gather hooks: a model built under `deepspeed.zero.Init` would reach its
    forward with empty (partitioned) weights. There it gets its own inference engine, as TRL's `prepare_deepspeed`
    does (trl/models/utils.py): ZeRO-3 shards it like the policy; ZeRO-1/2 keep a full copy on each rank (stage 0).
    """
    if getattr(accelerator.state, "deepspeed_plugin", None) is None:
        return accelerator.prepare_model(model, evaluation_mode=True)
    import deepspeed

    config = copy.deepcopy(accelerator.state.deepspeed_plugin.deepspeed_config)
    zero = config.setdefault("zero_optimization", {})
    stage = zero.get("stage", 0)
    hidden = getattr(getattr(model, "config", None), "hidden_size", None)
    if stage == 3 and isinstance(hidden, int):
        zero.update(reduce_bucket_size=hidden * hidden, stage3_param_persistence_threshold=10 * hidden,
                    stage3_prefetch_bucket_size=int(0.9 * hidden * hidden))
    for key in ("optimizer", "scheduler"):  # no optimizer here: drop the training-only blocks, as TRL does
        config.pop(key, None)
    zero.pop("offload_optimizer", None)
    if stage != 3:
        zero["stage"] = 0
    engine, *_ = deepspeed.initialize(model=model, config=config)
    engine.eval()
    return engine


def _set_param(root: nn.Module, dotted: str, param: nn.Parameter) -> None:
    *path, leaf = dotted.split(".")
    module = root
    for part in path:
        module = getattr(module, part)
    setattr(module, leaf, param)


def _zero3_enabled() -> bool:
    try:
        from transformers.integrations.deepspeed import is_deepspeed_zero3_enabled
    except ImportError:  # pragma: no cover
        return False
    return bool(is_deepspeed_zero3_enabled())


def disable_dropout(model: nn.Module) -> None:
    for module in model.modules():
        if isinstance(module, nn.Dropout):
            module.p = 0.0


@contextlib.contextmanager
def no_gradient_checkpointing(model: nn.Module, args: Any) -> Iterator[None]:
    """Turn gradient checkpointing off for a no-grad pass (reference/old log-probs, generation), back on after.

    transformers >= 5.x names it "activation checkpointing"; the older `gradient_checkpointing_*` names are used
    where the new ones do not exist (4.56).
    """
    inner = causal_lm(model)
    new_api = hasattr(type(inner), "is_activation_checkpointing")
    enabled = bool(getattr(inner, "is_activation_checkpointing" if new_api else "is_gradient_checkpointing", False))
    if enabled:
        (inner.activation_checkpointing_disable if new_api else inner.gradient_checkpointing_disable)()
    try:
        yield
    finally:
        if enabled:
            kwargs = args.gradient_checkpointing_kwargs
            if new_api:
                inner.activation_checkpointing_enable(activation_checkpointing_kwargs=kwargs)
            else:
                inner.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)
