"""The config base every reference trainer's config derives from.

`BaseConfig` is a `transformers.TrainingArguments` with the defaults TRL's `_BaseConfig` sets for all its trainers
(`logging_steps=10`, `gradient_checkpointing=True`, `bf16=None` meaning "bf16 unless fp16"), so a script written
against a TRL config runs unchanged against ours.

TRL fields that the reference trainers do not implement are still declared, with TRL's default, through
`unsupported(...)`: leaving them at the default is fine, setting them raises `UnsupportedFieldError` naming the field,
so nothing is ever silently ignored. Fields TRL does not have at all raise the dataclass' own `TypeError`.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

from transformers import TrainingArguments


class UnsupportedFieldError(ValueError):
    """A TRL config field that reference_impl declares (for drop-in compatibility) but does not implement was set."""


def option(default: Any = None, help: str = "", *, factory: Any = None) -> Any:
    """A supported config field with TRL's default and help text."""
    if factory is not None:
        return field(default_factory=factory, metadata={"help": help})
    return field(default=default, metadata={"help": help})


# An unsupported field says so in its help text, which is also where `BaseConfig` reads it back: a field's metadata
# holds nothing but `help`, since `transformers.HfArgumentParser` (how TRL's example scripts build their configs)
# passes every metadata key to `argparse.add_argument`, which refuses keys it does not know.
_UNSUPPORTED_HELP = re.compile(r"Unsupported here \((?P<why>.*)\); keep the default\.")


def unsupported(default: Any = None, why: str = "not implemented in reference_impl") -> Any:
    """A TRL field we accept only at its default; any other value raises `UnsupportedFieldError`."""
    return field(default=default, metadata={"help": f"Unsupported here ({why}); keep the default."})


def _unsupported_reason(f: dataclasses.Field) -> str | None:
    match = _UNSUPPORTED_HELP.fullmatch(f.metadata.get("help", ""))
    return match["why"] if match else None


def per_epoch(value: float | list[float], epoch: float | None) -> float:
    """A coefficient given as one value or one per epoch (TRL's `beta`/`alpha`/`mixture_coef` lists): the value of
    the current epoch, the last one past the list's end."""
    if isinstance(value, list):
        i = int(epoch or 0)
        return value[i] if i < len(value) else value[-1]
    return value


def _resolve_auto_padding(config: Any) -> None:
    if getattr(config, "pad_to_multiple_of", None) == "auto":
        config.pad_to_multiple_of = None  # TRL 1.16: 128 on Neuron only, None elsewhere
    elif isinstance(getattr(config, "pad_to_multiple_of", None), str):
        raise ValueError(f"pad_to_multiple_of must be an int, None or 'auto', got {config.pad_to_multiple_of!r}.")


@dataclass
class BaseConfig(TrainingArguments):
    """TrainingArguments with TRL's shared defaults; see the module docstring."""

    _VALID_DICT_FIELDS = TrainingArguments._VALID_DICT_FIELDS + ["model_init_kwargs"]

    logging_steps: float = option(10, "Log every X update steps (TRL default 10).")
    gradient_checkpointing: bool = option(True, "Enable gradient checkpointing (TRL default True).")
    bf16: bool | None = option(None, "bf16 mixed precision; None means True unless fp16 (TRL's rule).")
    lr_scheduler_kwargs: dict | str | None = option(None, "Extra lr scheduler arguments.")
    use_liger_kernel: bool = unsupported(False, "Liger kernels patch the forward this trainer owns")
    torch_empty_cache_steps: int | None = option(None, "Steps between torch.<device>.empty_cache() calls.")
    model_init_kwargs: dict | str | None = option(None, "Keyword arguments for from_pretrained when `model` is a str.")
    trust_remote_code: bool = option(False, "Allow custom code when loading models and tokenizers.")

    def __post_init__(self) -> None:
        self.bf16 = (not self.fp16) if self.bf16 is None else self.bf16
        for f in dataclasses.fields(self):
            why = _unsupported_reason(f)
            if why is None:
                continue
            value = getattr(self, f.name)
            default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
            if value != default:
                raise UnsupportedFieldError(
                    f"{type(self).__name__}.{f.name}={value!r}: this TRL field is not supported by reference_impl "
                    f"({why}). Remove it, or use TRL's trainer for this feature."
                )
        _resolve_auto_padding(self)
        if isinstance(self.model_init_kwargs, str):
            import json

            self.model_init_kwargs = json.loads(self.model_init_kwargs)
        super().__post_init__()
