"""`_BaseTrainer`: what every reference trainer shares, written once.

- model preparation: load from a name, disable dropout, install the engine head (`_model.add_engine_head`) on the
  causal LM, wrap with PEFT;
- the processing class: loaded from the model when not given, pad token defaulting to EOS;
- metrics: `self._metrics[mode][name]` lists averaged and merged into `Trainer.log`, exactly like TRL, so the logged
  names are TRL's;
- the gradient-accumulation contract (`loss_is_scaled_for_ga`) on every transformers version (>= 5.19 reads the
  attribute; older versions need `model_accepts_loss_kwargs`/`compute_loss_func` set, as TRL does);
- a version-independent `_check_kwargs` used by trainers that accept TRL constructor arguments they do not support.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import torch
import transformers
from packaging.version import Version
from torch import nn
from transformers import PreTrainedTokenizerBase, Trainer, TrainingArguments

from . import _cpu_fsdp, _model

TRANSFORMERS_VERSION = Version(transformers.__version__)


class _BaseTrainer(Trainer):
    """Common base; subclasses set `_name`, `_tag_names` and `loss_is_scaled_for_ga`."""

    loss_is_scaled_for_ga: bool | None = None
    _name = "Base"
    _tag_names: list[str] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if TRANSFORMERS_VERSION < Version("5.19.0") and self.loss_is_scaled_for_ga is not None:
            self.model_accepts_loss_kwargs = False
            if self.loss_is_scaled_for_ga:
                self.compute_loss_func = "loss already scaled for gradient accumulation"  # type: ignore[assignment]
        if not hasattr(self, "_metrics"):
            self._metrics = {"train": defaultdict(list), "eval": defaultdict(list)}
        if hasattr(self.model, "add_model_tags") and self._tag_names:
            self.model.add_model_tags(["reference_impl", *self._tag_names])

    def create_accelerator_and_postprocess(self) -> None:
        # an FSDP launch on CPU processes (gloo) would silently be DDP in accelerate: see `_cpu_fsdp`
        with _cpu_fsdp.cpu_fsdp_state():
            super().create_accelerator_and_postprocess()

    # ------------------------------------------------------------------------------------------------ preparation
    @staticmethod
    def _prepare_model(
        model: str | nn.Module, args: Any, peft_config: Any = None, *, kind: str = "causal-lm"
    ) -> nn.Module:
        """Load (if a name), disable dropout (if asked), add the engine head, apply PEFT."""
        if not isinstance(model, str) and args.model_init_kwargs:
            raise ValueError(
                "`model_init_kwargs` is set in the config but `model` is already instantiated; it would be ignored."
            )
        model = _model.load_causal_lm(model, args, kind=kind)
        if getattr(args, "disable_dropout", False):
            _model.disable_dropout(model)
        if kind == "causal-lm":
            _model.add_engine_head(_model.causal_lm(model))
        model = _model.apply_peft(model, peft_config, args)
        if _model.is_peft_model(model) and peft_config is None and args.gradient_checkpointing:
            model.enable_input_require_grads()
        return model

    @staticmethod
    def _prepare_processing_class(
        processing_class: Any, model: nn.Module, args: Any, padding_side: str | None = None
    ) -> PreTrainedTokenizerBase:
        if processing_class is None:
            from transformers import AutoTokenizer

            name = getattr(_model.causal_lm(model).config, "_name_or_path", "")
            if not name:
                raise ValueError("`processing_class` is required when the model was not loaded from a name or path.")
            processing_class = AutoTokenizer.from_pretrained(name, trust_remote_code=args.trust_remote_code)
        tokenizer = getattr(processing_class, "tokenizer", processing_class)
        if not isinstance(tokenizer, PreTrainedTokenizerBase):
            raise TypeError("`processing_class` must be a tokenizer (PreTrainedTokenizerBase) or a processor.")
        pad_token = getattr(args, "pad_token", None) or tokenizer.pad_token or tokenizer.eos_token
        tokenizer.pad_token = pad_token
        if padding_side is not None:
            tokenizer.padding_side = padding_side
        return processing_class

    def _accumulation_steps(self) -> int:
        """Micro-batches in the current optimizer step (`current_gradient_accumulation_steps` on new transformers)."""
        return int(getattr(self, "current_gradient_accumulation_steps", None) or self.args.gradient_accumulation_steps)

    # ---------------------------------------------------------------------------------------------------- metrics
    @property
    def _mode(self) -> str:
        return "train" if self.model.training else "eval"

    def _log_metric(self, name: str, value: float | torch.Tensor, mode: str | None = None) -> None:
        if isinstance(value, torch.Tensor):
            value = value.float().mean().item()
        self._metrics[mode or self._mode][name].append(float(value))

    def _gathered_mean(self, values: torch.Tensor) -> float:
        values = self.accelerator.gather_for_metrics(values.detach().float().reshape(-1))
        return values.nanmean().item() if values.numel() else float("nan")

    def _masked_mean(self, values: torch.Tensor, mask: torch.Tensor) -> float:
        """Token mean of `values` over `mask`, pooled across processes."""
        total = torch.stack([(values.detach().float() * mask).sum(), mask.float().sum()])
        total = self.accelerator.reduce(total, reduction="sum")
        return (total[0] / total[1].clamp(min=1.0)).item()

    def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
        mode = self._mode
        metrics = {key: sum(val) / len(val) for key, val in self._metrics[mode].items() if len(val)}
        if mode == "eval":
            metrics = {f"eval_{key}": val for key, val in metrics.items()}
        logs = {**logs, **metrics}
        super().log(logs, start_time)
        self._metrics[mode].clear()


def _coerce_args(args: Any, config_cls: type, model: Any, suffix: str) -> Any:
    """`None` -> a default config named after the model; a plain TrainingArguments -> `config_cls`, like TRL."""
    if args is None:
        name = model if isinstance(model, str) else getattr(getattr(model, "config", None), "_name_or_path", "model")
        return config_cls(f"{(name or 'model').split('/')[-1]}-{suffix}")
    if isinstance(args, config_cls):
        return args
    if isinstance(args, TrainingArguments):
        import dataclasses

        names = {f.name for f in dataclasses.fields(config_cls) if f.init}
        values = {f.name: getattr(args, f.name) for f in dataclasses.fields(args) if f.init and f.name in names}
        return config_cls(**values)
    raise TypeError(f"`args` must be a {config_cls.__name__} or TrainingArguments, got {type(args).__name__}.")
