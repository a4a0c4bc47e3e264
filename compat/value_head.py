"""A maintained copy of TRL's value-head wrapper, for code that still reads values after TRL 1.13 deleted it.

TRL <= 0.11 (`trl.AutoModelForCausalLMWithValueHead`, later `trl.experimental.ppo`) wrapped a causal LM and added a
scalar head; reward-modelling and value-estimation code outside PPO used it directly:
`model = AutoModelForCausalLMWithValueHead.from_pretrained(...)`, `_, _, values = model(...)`,
`model.load_state_dict(vhead_params, strict=False)`, `model.v_head`, `model.pretrained_model`. The migration
(`value-head-models`) retargets such a file's import here instead of dropping the head, so those lines keep working.

The contract kept (checked against the trl 0.11.4 wheel, `trl/models/modeling_value_head.py` and
`trl/models/modeling_base.py`):

* `ValueHead(config, summary_dropout_prob=0.1)`: `dropout` (Identity when the probability is 0/None) -> fp32-upcast to
  the head's dtype -> `summary = nn.Linear(hidden_size, 1)`; `hidden_size` is `config.word_embed_proj_dim` when the
  config has one (OPT), else `config.hidden_size`.
* `AutoModelForCausalLMWithValueHead(pretrained_model, **v_head_kwargs)` and `.from_pretrained(name_or_model, ...)`
  (a model object is wrapped as is; `peft_config=` applies `peft.get_peft_model`, after
  `peft.prepare_model_for_kbit_training` for a model loaded with a true `load_in_8bit` / `load_in_4bit` keyword, which
  also sends such a model to this process's device when no `device_map` is given, and which transformers 5 takes
  as `quantization_config`; `v_head_init_strategy="normal"`
  draws the head from N(0, v_head_initializer_range) with a zero bias; a local checkpoint's `v_head.*` weights are
  loaded into the head). A local folder holding a trained adapter (`adapter_config.json`) loads its base model
  (`base_model_name_or_path`) and `peft.PeftModel.from_pretrained(base, folder, is_trainable=is_trainable)`; a
  `peft_config` given with it is ignored with a warning, as TRL did.
* `forward(input_ids, past_key_values=None, attention_mask=None, return_past_key_values=False, **kw)` returns
  `(lm_logits, loss, value)` (plus `past_key_values` when asked): `lm_logits` in float32, `value` =
  `v_head(last hidden state).squeeze(-1)`, shape `(batch, seq)`.
* `state_dict()` is the wrapped model's state dict plus `v_head.*` keys (only `v_head.*` for a PEFT model);
  `load_state_dict` is `nn.Module`'s (keys `v_head.*` / `pretrained_model.*`), so `strict=False` loads a head alone;
  `generate` delegates.
* One difference: `save_pretrained(dir)` writes the wrapped model's checkpoint and the head next to it in
  `v_head.safetensors` (TRL put the `v_head.*` keys into the model's own file, which transformers 5 reports as
  unexpected keys); `from_pretrained(dir)` reads either layout. `push_to_hub` raises and says to upload the folder.

Not kept: the reward-adapter methods (`add_and_load_reward_modeling_adapter`, `compute_reward_score`; `reward_adapter=`
raises), hub downloads of a separate value-head file for sharded checkpoints, an adapter on the Hub (TRL looked for
`adapter_config.json` there too; transformers' own PEFT integration loads such a repository now, without
`is_trainable`), and the seq2seq wrapper; the migration marks uses of
those. Importing this module imports torch and transformers (it is not imported by `import compat`).
"""

from __future__ import annotations

import functools
import logging
import os
from typing import Any

import torch
from torch import nn

logger = logging.getLogger(__name__)
VHEAD_ARGS = ("summary_dropout_prob", "v_head_initializer_range", "v_head_init_strategy")


class ValueHead(nn.Module):
    """A scalar per token: dropout -> Linear(hidden_size, 1), computed in the head's dtype (fp32 unless cast)."""

    def __init__(self, config: Any, **kwargs: Any) -> None:
        super().__init__()
        if hasattr(config, "summary_dropout_prob"):
            summary_dropout_prob = config.summary_dropout_prob
        else:
            summary_dropout_prob = kwargs.pop("summary_dropout_prob", 0.1)
        self.dropout: nn.Module = nn.Dropout(summary_dropout_prob) if summary_dropout_prob else nn.Identity()
        hidden_size = getattr(config, "word_embed_proj_dim", None) or _hidden_size(config)
        self.summary = nn.Linear(hidden_size, 1)
        self.flatten = nn.Flatten()

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        output = self.dropout(hidden_states)
        if output.dtype != self.summary.weight.dtype:
            output = output.to(self.summary.weight.dtype)
        return self.summary(output)


def _hidden_size(config: Any) -> int:
    if hasattr(config, "hidden_size"):
        return int(config.hidden_size)
    text = getattr(config, "get_text_config", None)
    if text is not None and hasattr(text(), "hidden_size"):
        return int(text().hidden_size)
    raise ValueError(f"{type(config).__name__} has no hidden_size (nor word_embed_proj_dim): cannot size a value "
                     "head; pass a causal LM whose config says its hidden size")


class AutoModelForCausalLMWithValueHead(nn.Module):
    """A causal LM plus a `ValueHead`; `model(...)` returns `(lm_logits, loss, value)` as TRL's wrapper did."""

    lm_head_namings = ("lm_head", "embed_out")
    supported_args = VHEAD_ARGS

    def __init__(self, pretrained_model: Any, **kwargs: Any) -> None:
        super().__init__()
        v_head_kwargs = {k: kwargs.pop(k) for k in list(kwargs) if k in VHEAD_ARGS}
        if kwargs:
            raise TypeError(f"unexpected arguments {sorted(kwargs)} for the value-head wrapper; expected only "
                            f"{', '.join(VHEAD_ARGS)}")
        self.pretrained_model = pretrained_model
        self.config = pretrained_model.config
        if not any(hasattr(_base(pretrained_model), n) for n in self.lm_head_namings) and \
                not hasattr(pretrained_model, "get_output_embeddings"):
            raise ValueError(f"{type(pretrained_model).__name__} has no language-model head (lm_head / embed_out); "
                             "wrap a causal LM")
        self.is_peft_model = _is_peft(pretrained_model)
        self.v_head = ValueHead(self.config, **v_head_kwargs)
        if v_head_kwargs.get("v_head_init_strategy") == "normal":
            self.v_head.summary.weight.data.normal_(mean=0.0, std=v_head_kwargs.get("v_head_initializer_range", 0.2))
            self.v_head.summary.bias.data.zero_()
        elif v_head_kwargs.get("v_head_init_strategy") not in (None, "normal"):
            raise ValueError(f"v_head_init_strategy={v_head_kwargs['v_head_init_strategy']!r}: expected None or "
                             "'normal'")
        # on the model's device, in fp32 (TRL built the head in fp32 and upcast the hidden states)
        device = next(pretrained_model.parameters()).device
        self.v_head.to(device)

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path: Any, *model_args: Any,
                        **kwargs: Any) -> AutoModelForCausalLMWithValueHead:
        """Load (or take) a causal LM and wrap it; `v_head.*` weights in a local checkpoint are loaded."""
        v_head_kwargs = {k: kwargs.pop(k) for k in list(kwargs) if k in VHEAD_ARGS}
        peft_config = kwargs.pop("peft_config", None)
        is_trainable = kwargs.pop("is_trainable", False)
        for k in ("reward_adapter", "reward_adapter_name"):
            if kwargs.pop(k, None) is not None:
                raise NotImplementedError(f"{k}=: the reward-adapter mode of TRL's wrapper is not kept by trl-compat; "
                                          "load the reward adapter with peft (PeftModel.load_adapter) instead")
        kbit_kwargs = {k: kwargs.pop(k) for k in list(kwargs) if k in KBIT_PREPARE_ARGS}
        if isinstance(pretrained_model_name_or_path, (str, os.PathLike)):
            from transformers import AutoModelForCausalLM

            # TRL read only these two keywords to decide (not `quantization_config`)
            kbit = bool(kwargs.get("load_in_8bit") or kwargs.get("load_in_4bit"))
            if kbit and "device_map" not in kwargs:
                kwargs["device_map"] = {"": _current_device()}
            folder = os.fspath(pretrained_model_name_or_path)
            adapter_folder = folder if os.path.exists(os.path.join(folder, "adapter_config.json")) \
                else _hub_adapter_folder(folder, kwargs.get("token"))
            if adapter_folder is not None:
                # a trained adapter (a folder, or a Hub repo): its base model plus that adapter; TRL ignored
                # `peft_config` here (and did not prepare a k-bit base for training)
                from peft import PeftConfig, PeftModel

                if peft_config is not None:
                    logger.warning("`peft_config` argument ignored since a peft config file was found in %s", folder)
                base_name = PeftConfig.from_pretrained(adapter_folder).base_model_name_or_path
                base = AutoModelForCausalLM.from_pretrained(base_name, *model_args, **_quantization_keywords(kwargs))
                model = PeftModel.from_pretrained(base, folder, is_trainable=is_trainable)
                peft_config = None
            else:
                model = AutoModelForCausalLM.from_pretrained(pretrained_model_name_or_path, *model_args,
                                                             **_quantization_keywords(kwargs))
        else:
            model = pretrained_model_name_or_path
            kbit = bool(getattr(model, "is_loaded_in_8bit", False) or getattr(model, "is_loaded_in_4bit", False))
        if peft_config is not None:
            from peft import get_peft_model

            if kbit:
                from peft import prepare_model_for_kbit_training

                model = prepare_model_for_kbit_training(model, **kbit_kwargs)
            model = get_peft_model(model, peft_config)
        wrapper = cls(model, **v_head_kwargs)
        if isinstance(pretrained_model_name_or_path, (str, os.PathLike)):
            head = _local_v_head_state(os.fspath(pretrained_model_name_or_path))
            if head:
                wrapper.v_head.load_state_dict(head, strict=False)
        return wrapper

    def forward(self, input_ids: torch.Tensor | None = None, past_key_values: Any = None,
                attention_mask: torch.Tensor | None = None, return_past_key_values: bool = False,
                **kwargs: Any) -> tuple[Any, ...]:
        kwargs["output_hidden_states"] = True
        if past_key_values is not None:  # TRL passed None too; transformers 5 warns about the keyword itself
            kwargs["past_key_values"] = past_key_values
        out = self.pretrained_model(input_ids=input_ids, attention_mask=attention_mask, **kwargs)
        last_hidden_state = out.hidden_states[-1]
        if last_hidden_state.device != self.v_head.summary.weight.device:
            last_hidden_state = last_hidden_state.to(self.v_head.summary.weight.device)
        value = self.v_head(last_hidden_state).squeeze(-1)
        lm_logits = out.logits
        if lm_logits.dtype != torch.float32:
            lm_logits = lm_logits.float()
        if return_past_key_values:
            return lm_logits, out.loss, value, out.past_key_values
        return lm_logits, out.loss, value

    def generate(self, *args: Any, **kwargs: Any) -> Any:
        return self.pretrained_model.generate(*args, **kwargs)

    def state_dict(self, *args: Any, **kwargs: Any) -> dict[str, Any]:  # type: ignore[override]
        state = {} if self.is_peft_model else dict(self.pretrained_model.state_dict(*args, **kwargs))
        for k, v in self.v_head.state_dict(*args, **kwargs).items():
            state[f"v_head.{k}"] = v
        return state

    def save_pretrained(self, save_directory: str, *args: Any, **kwargs: Any) -> Any:
        """The wrapped model's checkpoint plus `v_head.safetensors` holding the head (`v_head.*` keys)."""
        result = self.pretrained_model.save_pretrained(save_directory, *args, **kwargs)
        from safetensors.torch import save_file

        head = {f"v_head.{k}": v.detach().contiguous().cpu() for k, v in self.v_head.state_dict().items()}
        save_file(head, os.path.join(save_directory, VHEAD_FILE))
        return result

    def push_to_hub(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the value-head wrapper kept by trl-compat does not upload: save_pretrained(dir) "
                                  "writes the model plus v_head.safetensors; upload that folder with huggingface_hub")


#: TRL 0.4 - 0.26 `trl.models.SUPPORTED_ARCHITECTURES`, the value-head classes the step-loop PPOTrainer accepted
#: (copies of that trainer check their model against it): the one trl-compat keeps. TRL's tuple also held
#: `AutoModelForSeq2SeqLMWithValueHead`, which trl-compat does not keep.
SUPPORTED_ARCHITECTURES = (AutoModelForCausalLMWithValueHead,)
VHEAD_FILE = "v_head.safetensors"
#: the keywords of `peft.prepare_model_for_kbit_training` TRL's `from_pretrained` took and passed on (`_split_kwargs`)
KBIT_PREPARE_ARGS = ("use_gradient_checkpointing", "gradient_checkpointing_kwargs")
#: `BitsAndBytesConfig.__init__`'s keywords other than the two flags (4.56.2 and 5.x): transformers 4.x moved these from
#: a `from_pretrained` call into the config it built from `load_in_8bit` / `load_in_4bit`
BNB_KEYWORDS = ("llm_int8_threshold", "llm_int8_skip_modules", "llm_int8_enable_fp32_cpu_offload",
                "llm_int8_has_fp16_weight", "bnb_4bit_compute_dtype", "bnb_4bit_quant_type", "bnb_4bit_use_double_quant",
                "bnb_4bit_quant_storage")


def _hub_adapter_folder(repo_id: str, token: Any) -> str | None:
    """The local folder of the Hub repo `repo_id`'s `adapter_config.json` (downloaded, or found in the cache when
    offline), as TRL's wrapper looked it up (0.4 - 1.12: `hf_hub_download`); None when the repo has no such file, does
    not exist, is not a valid id, or cannot be reached."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import (
        EntryNotFoundError,
        HFValidationError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
    )

    try:
        return os.path.dirname(hf_hub_download(repo_id, "adapter_config.json", token=token))
    except (EntryNotFoundError, LocalEntryNotFoundError, HFValidationError, RepositoryNotFoundError):
        return None


def _current_device() -> Any:
    """TRL 0.11.4 `PreTrainedModelWrapper._get_current_device`: where a k-bit model went without a `device_map`."""
    from accelerate import PartialState
    from transformers.utils import is_torch_npu_available, is_torch_xpu_available

    state = PartialState()
    if is_torch_xpu_available():
        return f"xpu:{state.local_process_index}"
    if is_torch_npu_available():
        return f"npu:{state.local_process_index}"
    return state.local_process_index if torch.cuda.is_available() else "cpu"


@functools.lru_cache(maxsize=1)
def _takes_kbit_flags() -> bool:
    """The installed transformers' `from_pretrained` still reads `load_in_8bit` (4.x): its source, read once."""
    import inspect

    from transformers import PreTrainedModel

    return "load_in_8bit" in inspect.getsource(PreTrainedModel.from_pretrained)


def _quantization_keywords(kwargs: dict[str, Any]) -> dict[str, Any]:
    """`from_pretrained` keywords with `load_in_8bit` / `load_in_4bit` as transformers 4.x read them, for a
    transformers that dropped them (5.0; rule `load-in-kbit`): when one is true, `quantization_config=
    BitsAndBytesConfig(<the flags and the bitsandbytes keywords>)` (4.x refused a `quantization_config` beside them);
    when both are false, nothing. On a transformers that still takes them, the keywords as given."""
    from transformers import BitsAndBytesConfig

    if not any(k in kwargs for k in ("load_in_8bit", "load_in_4bit")) or _takes_kbit_flags():
        return kwargs
    out = dict(kwargs)
    flags = {k: out.pop(k, False) for k in ("load_in_8bit", "load_in_4bit")}
    if not any(flags.values()):
        return out
    if out.get("quantization_config") is not None:
        raise ValueError("You can't pass `load_in_4bit`or `load_in_8bit` as a kwarg when passing "
                         "`quantization_config` argument at the same time.")  # transformers 4.56.2's message
    bnb = {k: out.pop(k) for k in BNB_KEYWORDS if k in out}
    out["quantization_config"] = BitsAndBytesConfig(**flags, **bnb)
    return out


def _base(model: Any) -> Any:
    get_base = getattr(model, "get_base_model", None)
    return get_base() if callable(get_base) else model


def _is_peft(model: Any) -> bool:
    try:
        from peft import PeftModel
    except ImportError:
        return False
    return isinstance(model, PeftModel)


def _local_v_head_state(folder: str) -> dict[str, torch.Tensor]:
    """`v_head.*` weights found in a local checkpoint folder (ours, or TRL's single-file checkpoint), prefix dropped."""
    if not os.path.isdir(folder):
        return {}
    found: dict[str, torch.Tensor] = {}
    for name in (VHEAD_FILE, "model.safetensors"):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            from safetensors.torch import load_file

            found.update(load_file(path))
    path = os.path.join(folder, "pytorch_model.bin")
    if os.path.exists(path):
        found.update(torch.load(path, map_location="cpu", weights_only=True))
    return {k.split("v_head.", 1)[1]: v for k, v in found.items() if "v_head." in k}
