"""Smoke mode inside the child process: patches installed by the generated `sitecustomize` before the script runs.

Why an import hook: user scripts do `from transformers import AutoModelForCausalLM` at the top, long before anything
could patch the name they bound. So the patches go on the *classes* (`PreTrainedModel.from_pretrained`,
`_BaseAutoModelClass.from_pretrained`, `PreTrainedTokenizerBase.from_pretrained`, `TrainingArguments.__post_init__`, ...)
at the moment their defining module finishes executing: a meta-path finder wraps the loader of those few modules and
runs a patch function right after `exec_module`. Nothing heavy is imported here; torch/transformers load only when the
script imports them, exactly as without smoke mode.

What the child reports back (a JSON state file the parent reads): training steps completed (a TrainerCallback added
to every Trainer), trainers built, the uncaught exception with its frames, notices (what was stood in for, what was
forced, which network attempts were blocked).

This file is loaded by path (`spec_from_file_location`), not as `compat.smoke._hook`, so `compat/__init__.py` (which may
check the environment) never runs inside the user's process; it works with transformers 4.56 and 5.x.
"""

from __future__ import annotations

import atexit
import dataclasses
import importlib.abc
import importlib.metadata
import importlib.util
import json
import os
import sys
import threading
import traceback
from typing import Any, Callable

ENV_STATE = "TRL_COMPAT_SMOKE_STATE"
ENV_TMP = "TRL_COMPAT_SMOKE_TMP"
ENV_MAX_STEPS = "TRL_COMPAT_SMOKE_MAX_STEPS"
ENV_SCRIPT = "TRL_COMPAT_SMOKE_SCRIPT"
ENV_OWNER = "TRL_COMPAT_SMOKE_OWNER"
ENV_SHAPE = "TRL_COMPAT_SMOKE_SHAPE"  # JSON file: what the script reads from its data (compat/smoke/analysis.py)
ENV_LEARN = "TRL_COMPAT_SMOKE_LEARN"  # --learn N: N steps on a task with a known optimum (see patch_learning)
ENV_STACKS = "TRL_COMPAT_SMOKE_STACKS"  # where faulthandler writes every thread's stack when the runner asks (SIGUSR1)
PREFIX = "[trl-compat smoke]"

_HERE = os.path.dirname(os.path.abspath(__file__))
_lock = threading.Lock()
STATE: dict[str, Any] = {
    "pid": os.getpid(), "steps": 0, "trainers": [], "train_started": 0, "train_completed": 0,
    "notices": [], "network_blocked": [], "exception": None, "stopped_by_smoke": False,
    "learn": None,
}
_owner = False
_installed = False
_stacks_file: Any = None
MAX_STEPS = 2
LEARN = 0  # > 0 in --learn mode: the number of steps
MAP_ROWS = 1024  # rows of a grown synthetic dataset that map/filter process
LEARN_LR = 2e-2  # the tiny stand-in model's learning rate in --learn mode (the user's is sized for a real model)
TMP = ""
S: Any = None  # the _standins module


class SmokeNetworkBlocked(ConnectionError):
    """Raised for any non-local connection in smoke mode: smoke runs are offline by design."""


class SmokeStop(SystemExit):
    """Ends a hand-written (classic PPO) training loop once the smoke step budget is spent; exit code 0."""


# --------------------------------------------------------------------------------------------------------- state
def write_state() -> None:
    path = os.environ.get(ENV_STATE)
    if not path or not _owner:
        return
    with _lock:
        data = json.dumps(STATE, default=str)
        tmp = f"{path}.{os.getpid()}.tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except OSError:
            pass


def notice(msg: str, echo: bool = True) -> None:
    if msg in STATE["notices"]:
        return
    STATE["notices"].append(msg)
    if echo:
        print(f"{PREFIX} {msg}", file=sys.stderr, flush=True)
    write_state()


def _load(name: str, path: str) -> Any:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _standins() -> Any:
    global S
    if S is None:
        S = _load("_trl_compat_smoke_standins", os.path.join(_HERE, "_standins.py"))
        S.TINY = _load("_trl_compat_smoke_tiny", os.path.join(os.path.dirname(_HERE), "tiny.py"))
        S.NOTICE = notice
        shape_path = os.environ.get(ENV_SHAPE)
        if shape_path:
            try:
                with open(shape_path, encoding="utf-8") as fh:
                    S.SHAPE = json.load(fh)
            except (OSError, ValueError):
                pass
    return S


def redirect(path: Any) -> str:
    """Any save location outside the smoke temp dir is redirected into it (nothing lands in the user's repo)."""
    text = os.fspath(path) if path is not None else "saved"
    full = os.path.abspath(text)
    if TMP and (full == TMP or full.startswith(TMP + os.sep)):
        return text
    target = os.path.join(TMP or ".", "saved", os.path.basename(full.rstrip(os.sep)) or "saved")
    notice(f"save to {text!r} redirected to the smoke temp dir")
    return target


# ------------------------------------------------------------------------------------------------ import hook
_HOOKS: dict[str, list[Callable[[Any], None]]] = {}
_busy: set[str] = set()


def on_import(module_name: str) -> Callable[[Callable[[Any], None]], Callable[[Any], None]]:
    def register(fn: Callable[[Any], None]) -> Callable[[Any], None]:
        _HOOKS.setdefault(module_name, []).append(fn)
        return fn
    return register


def _run_hooks(name: str, module: Any) -> None:
    for fn in _HOOKS.get(name, []):
        try:
            fn(module)
        except Exception as exc:  # a patch that no longer fits a library version must be visible, not fatal
            notice(f"could not patch {name} ({fn.__name__}): {type(exc).__name__}: {exc}")


class _PatchingLoader(importlib.abc.Loader):
    def __init__(self, loader: Any, name: str) -> None:
        self._loader = loader
        self._name = name

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        module.__spec__.loader = self._loader
        module.__loader__ = self._loader
        self._loader.exec_module(module)
        _run_hooks(self._name, module)

    def __getattr__(self, item: str) -> Any:
        return getattr(self._loader, item)


class _PostImportFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in _HOOKS or fullname in _busy:
            return None
        _busy.add(fullname)
        try:
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    break
            else:
                return None
        finally:
            _busy.discard(fullname)
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _PatchingLoader(spec.loader, fullname)
        return spec


# ---------------------------------------------------------------------------------------------------- network
_LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "0.0.0.0", "", "ip6-localhost"}


def _is_local(host: Any) -> bool:
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    host = str(host)
    if host in _LOCAL_HOSTS or host.startswith("127.") or host.startswith("/"):
        return True
    try:
        import socket

        return host in (socket.gethostname(), socket.getfqdn())
    except OSError:
        return False


def _blocked(where: str) -> SmokeNetworkBlocked:
    STATE["network_blocked"].append(where)
    write_state()
    return SmokeNetworkBlocked(
        f"trl-compat smoke: network access to {where} blocked. Smoke runs are offline (HF_HUB_OFFLINE=1): models, "
        "tokenizers, datasets and pipelines are stood in for, but this call is not. Guard it for smoke runs "
        "(os.environ.get('TRL_COMPAT_SMOKE')) or report it so a stand-in can be added.")


def block_network() -> None:
    import socket

    real_connect, real_connect_ex, real_gai = socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo

    def _where(address: Any) -> tuple[bool, str]:
        if isinstance(address, (str, bytes)):  # AF_UNIX
            return True, str(address)
        host, port = address[0], address[1] if len(address) > 1 else ""
        return _is_local(host), f"{host}:{port}"

    def connect(self: Any, address: Any) -> Any:
        local, where = _where(address)
        if not local:
            raise _blocked(where)
        return real_connect(self, address)

    def connect_ex(self: Any, address: Any) -> Any:
        local, where = _where(address)
        if not local:
            raise _blocked(where)
        return real_connect_ex(self, address)

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if not _is_local(host):
            raise _blocked(f"{host}:{port}")
        return real_gai(host, port, *args, **kwargs)

    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
    socket.getaddrinfo = getaddrinfo


# ------------------------------------------------------------------------------------------- transformers patches
def _kind_of(cls: Any) -> str:
    name = cls.__name__
    if "SequenceClassification" in name:
        return "sequence-classification"
    if "Seq2Seq" in name or (name.endswith("ForConditionalGeneration") and getattr(
            getattr(cls, "config_class", None), "is_encoder_decoder", False)):
        return "seq2seq-lm"
    if "CausalLM" in name or "LMHead" in name or name.endswith("ForConditionalGeneration"):
        return "causal-lm"
    return "base"


@on_import("transformers.modeling_utils")
def patch_pretrained_model(mod: Any) -> None:
    ptm = mod.PreTrainedModel

    def from_pretrained(cls: Any, pretrained_model_name_or_path: Any, *args: Any, **kwargs: Any) -> Any:
        return _standins().tiny_model_for(pretrained_model_name_or_path, _kind_of(cls), kwargs, model_class=cls)

    ptm.from_pretrained = classmethod(from_pretrained)
    _redirect_save_pretrained(ptm)


def _redirect_save_pretrained(cls: Any) -> None:
    """`cls.save_pretrained` writes into the smoke run's temp dir and never pushes."""
    real_save = cls.save_pretrained

    def save_pretrained(self: Any, save_directory: Any, *args: Any, **kwargs: Any) -> Any:
        kwargs["push_to_hub"] = False
        return real_save(self, redirect(save_directory), *args, **kwargs)

    cls.save_pretrained = save_pretrained


@on_import("transformers.utils.hub")
def patch_push_to_hub(mod: Any) -> None:
    def push_to_hub(self: Any, repo_id: Any = None, *args: Any, **kwargs: Any) -> None:
        notice(f"{type(self).__name__}.push_to_hub({repo_id!r}) skipped (smoke runs never push)")
        return None

    mod.PushToHubMixin.push_to_hub = push_to_hub


def _auto_from_pretrained(kind: str | None) -> Any:
    def from_pretrained(cls: Any, pretrained_model_name_or_path: Any, *args: Any, **kwargs: Any) -> Any:
        use_kind = kind or _kind_of(cls)
        if use_kind == "base" and cls.__name__ not in ("AutoModel",):
            # AutoModelForTokenClassification & co: the auto class itself builds from the tiny config
            st = _standins()
            config = st.tiny_config_for(pretrained_model_name_or_path, "causal-lm", **kwargs)
            return st._finish(st._with_fork_rng(lambda: cls.from_config(config)), pretrained_model_name_or_path)
        return _standins().tiny_model_for(pretrained_model_name_or_path, use_kind, kwargs)

    return classmethod(from_pretrained)


@on_import("transformers.models.auto.auto_factory")
def patch_auto_factory(mod: Any) -> None:
    mod._BaseAutoModelClass.from_pretrained = _auto_from_pretrained(None)


@on_import("transformers.models.auto.modeling_auto")
def patch_auto_overrides(mod: Any) -> None:
    base = mod._BaseAutoModelClass
    for obj in list(vars(mod).values()):
        if isinstance(obj, type) and issubclass(obj, base) and "from_pretrained" in obj.__dict__:
            obj.from_pretrained = _auto_from_pretrained(None)


@on_import("transformers.tokenization_utils_base")
def patch_tokenizer_base(mod: Any) -> None:
    base = mod.PreTrainedTokenizerBase

    def from_pretrained(cls: Any, pretrained_model_name_or_path: Any, *args: Any, **kwargs: Any) -> Any:
        return _standins().tiny_tokenizer_for(pretrained_model_name_or_path, kwargs)

    base.from_pretrained = classmethod(from_pretrained)
    _redirect_save_pretrained(base)


@on_import("transformers.models.auto.tokenization_auto")
def patch_auto_tokenizer(mod: Any) -> None:
    def from_pretrained(cls: Any, pretrained_model_name_or_path: Any, *args: Any, **kwargs: Any) -> Any:
        return _standins().tiny_tokenizer_for(pretrained_model_name_or_path, kwargs)

    mod.AutoTokenizer.from_pretrained = classmethod(from_pretrained)


@on_import("transformers.models.auto.processing_auto")
def patch_auto_processor(mod: Any) -> None:
    def from_pretrained(cls: Any, pretrained_model_name_or_path: Any, *args: Any, **kwargs: Any) -> Any:
        return _standins().tiny_tokenizer_for(pretrained_model_name_or_path, kwargs)

    mod.AutoProcessor.from_pretrained = classmethod(from_pretrained)


def _tiny_config_any(name: Any, kwargs: dict[str, Any], model_type: str | None = None) -> Any:
    st = _standins()
    model_type = model_type or st.infer_model_type(name)
    kind = "causal-lm"
    if model_type and not st._supports(model_type, "causal-lm"):
        kind = "sequence-classification" if st._supports(model_type, "sequence-classification") else "seq2seq-lm"
    config = st.tiny_config_for(name, kind, model_type, **kwargs)
    from transformers.models.auto import modeling_auto as ma

    table = {"causal-lm": ma.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES, "seq2seq-lm": ma.MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES,
             "sequence-classification": ma.MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES}[kind]
    arch = table.get(config.model_type)
    if arch:
        config.architectures = [arch]
    return config


@on_import("transformers.models.auto.configuration_auto")
def patch_auto_config(mod: Any) -> None:
    def from_pretrained(cls: Any, pretrained_model_name_or_path: Any, *args: Any, **kwargs: Any) -> Any:
        config = _tiny_config_any(pretrained_model_name_or_path, kwargs)
        return (config, {}) if kwargs.get("return_unused_kwargs") else config

    mod.AutoConfig.from_pretrained = classmethod(from_pretrained)


@on_import("transformers.configuration_utils")
def patch_config_class(mod: Any) -> None:
    base = getattr(mod, "PreTrainedConfig", None) or mod.PretrainedConfig

    def from_pretrained(cls: Any, pretrained_model_name_or_path: Any, *args: Any, **kwargs: Any) -> Any:
        model_type = getattr(cls, "model_type", "") or None
        config = _tiny_config_any(pretrained_model_name_or_path, kwargs, model_type)
        return (config, {}) if kwargs.get("return_unused_kwargs") else config

    base.from_pretrained = classmethod(from_pretrained)


@on_import("transformers.generation.configuration_utils")
def patch_generation_config(mod: Any) -> None:
    real = mod.GenerationConfig.from_pretrained.__func__

    def from_pretrained(cls: Any, pretrained_model_name: Any, *args: Any, **kwargs: Any) -> Any:
        if os.path.isdir(os.fspath(pretrained_model_name)):
            return real(cls, pretrained_model_name, *args, **kwargs)
        return cls(pad_token_id=0, eos_token_id=1, bos_token_id=2)

    mod.GenerationConfig.from_pretrained = classmethod(from_pretrained)


@on_import("transformers.utils.quantization_config")
def patch_bnb_config(mod: Any) -> None:
    """transformers 4.x checks the installed bitsandbytes when a BitsAndBytesConfig is built; quantization is dropped
    in smoke runs anyway, so a CPU machine without bitsandbytes must still get through the script's config line."""
    cls = getattr(mod, "BitsAndBytesConfig", None)
    if cls is None:
        return
    real = cls.post_init

    def post_init(self: Any) -> None:
        try:
            real(self)
        except importlib.metadata.PackageNotFoundError:
            notice("BitsAndBytesConfig built without bitsandbytes installed (quantization is dropped in smoke runs)")

    cls.post_init = post_init


@on_import("transformers.pipelines")
def patch_pipeline(mod: Any) -> None:
    real = mod.pipeline

    def pipeline(task: Any = None, model: Any = None, *args: Any, **kwargs: Any) -> Any:
        if args:
            kwargs.setdefault("config", args[0])
            if len(args) > 1:
                kwargs.setdefault("tokenizer", args[1])
        kwargs.pop("config", None)
        return _standins().tiny_pipeline(real, task, model, **kwargs)

    pipeline.__doc__ = real.__doc__
    mod.pipeline = pipeline


# ------------------------------------------------------------------------------------------- training arguments
_OPTIM_NEEDS_GPU = ("bnb", "8bit", "paged", "galore", "apollo", "lomo", "torchao", "schedule_free", "grokadamw",
                    "ademamix_8bit")


def force_training_args(args: Any) -> None:
    """Clamp any TrainingArguments (hence every TRL config) to a 2-step CPU run that writes only to the temp dir."""
    fields = {f.name: f for f in dataclasses.fields(args)}
    changed: list[str] = []

    def put(name: str, value: Any) -> None:
        if name in fields and getattr(args, name, None) != value:
            setattr(args, name, value)
            changed.append(f"{name}={value!r}")

    def cap(name: str, limit: int) -> None:
        value = getattr(args, name, None)
        if name in fields and isinstance(value, int) and not isinstance(value, bool) and value > limit:
            put(name, limit)

    def reset(name: str) -> None:
        if name in fields:
            fld = fields[name]
            default = fld.default if fld.default is not dataclasses.MISSING else (
                fld.default_factory() if fld.default_factory is not dataclasses.MISSING else None)  # type: ignore[misc]
            if getattr(args, name, None) and getattr(args, name, None) != default:
                put(name, default)

    grpo_like = "num_generations" in fields
    batch = getattr(args, "per_device_train_batch_size", 1) or 1
    per_device = 2 if grpo_like else max(1, min(int(batch), 2))
    put("per_device_train_batch_size", per_device)
    put("per_device_eval_batch_size", 2)
    put("gradient_accumulation_steps", 1)
    put("max_steps", MAX_STEPS)
    put("num_train_epochs", 1)
    out = os.path.join(TMP or ".", "output")
    put("output_dir", out)
    if "logging_dir" in fields:
        put("logging_dir", os.path.join(out, "logs"))
    put("use_cpu", True)
    for name in ("bf16", "fp16", "bf16_full_eval", "fp16_full_eval", "torch_compile", "gradient_checkpointing",
                 "auto_find_batch_size", "push_to_hub", "load_best_model_at_end", "eval_on_start", "do_eval",
                 "dataloader_pin_memory", "dataloader_persistent_workers", "use_liger_kernel", "use_vllm",
                 "log_completions", "use_transformers_continuous_batching", "use_transformers_paged"):
        put(name, False)
    put("tf32", None)
    put("report_to", "none")
    put("save_strategy", "no")
    put("eval_strategy", "no")
    put("logging_strategy", "steps")
    put("logging_steps", 1)
    put("resume_from_checkpoint", None)
    put("dataloader_num_workers", 0)
    put("disable_tqdm", True)
    put("dataset_num_proc", None)
    put("torch_empty_cache_steps", None)
    put("log_completions_hub_repo", None)
    for name in ("deepspeed", "fsdp", "fsdp_config", "parallelism_config", "dataloader_prefetch_factor"):
        reset(name)
    optim = str(getattr(args, "optim", "") or "")
    optim = getattr(getattr(args, "optim", None), "value", optim)
    if any(tag in str(optim).lower() for tag in _OPTIM_NEEDS_GPU):
        put("optim", "adamw_torch")
    if LEARN:  # enough samples per step for the reward's mean to move; the user's algorithm settings are kept
        put("learning_rate", LEARN_LR)
        put("lr_scheduler_type", "constant")
        put("warmup_steps", 0)
        put("warmup_ratio", 0.0)
    if grpo_like:
        generations = getattr(args, "num_generations", 2) or 2
        generations = min(max(int(generations), 2), 8) if LEARN else 2
        put("num_generations", generations)
        if LEARN:  # 8 prompts a step: the reward's mean over a few steps is then steady enough to compare
            put("per_device_train_batch_size", generations * 8)
        put("num_generations_eval", None)
        put("generation_batch_size", None)
        put("steps_per_generation", None)
    for name in ("max_completion_length", "max_new_tokens", "response_length"):
        cap(name, 8)
    cap("max_length", 256)
    cap("max_prompt_length", 128)
    if "total_episodes" in fields:  # Trainer-style PPO (TRL <= 1.12): one step per rollout of the whole batch
        put("num_mini_batches", 1)
        put("num_ppo_epochs", 1)
        put("num_sample_generations", 0)
        put("whiten_rewards", False)  # needs a local minibatch >= 8
        cap("local_rollout_forward_batch_size", 2)
        put("total_episodes", MAX_STEPS * per_device)
    for name in ("model_init_kwargs", "ref_model_init_kwargs"):
        kwargs = getattr(args, name, None)
        if isinstance(kwargs, dict):
            quant = [k for k in _standins().QUANT_KWARGS if kwargs.get(k)]
            if quant:
                notice(f"{type(args).__name__}.{name}: quantization dropped ({', '.join(quant)}): needs a GPU")
                setattr(args, name, {k: v for k, v in kwargs.items() if k not in quant})
    notice(f"{type(args).__name__} forced for smoke: " + (", ".join(changed) if changed else "already small"))


@on_import("transformers.training_args")
def patch_training_args(mod: Any) -> None:
    cls = mod.TrainingArguments
    real = cls.__post_init__

    def __post_init__(self: Any) -> None:
        force_training_args(self)
        return real(self)

    cls.__post_init__ = __post_init__


@on_import("transformers.trainer_callback")
def patch_callback_handler(mod: Any) -> None:
    """Count steps where every Trainer reports them: its CallbackHandler. This also covers trainers that build their
    own loop without `Trainer.__init__`/`Trainer.train` (TRL's Trainer-style PPO up to 1.12, RLOO before 0.22)."""
    handler = mod.CallbackHandler
    real_init, real_begin = handler.__init__, handler.on_train_begin
    real_step_end, real_end = handler.on_step_end, handler.on_train_end

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        owner = sys._getframe(1).f_locals.get("self")
        if owner is not None and owner is not self:
            STATE["trainers"].append(type(owner).__name__)
            write_state()

    def on_train_begin(self: Any, args: Any, state: Any, control: Any) -> Any:
        STATE["train_started"] += 1
        write_state()
        return real_begin(self, args, state, control)

    def on_step_end(self: Any, args: Any, state: Any, control: Any) -> Any:
        STATE["steps"] = max(int(STATE["steps"]), int(state.global_step))
        write_state()
        return real_step_end(self, args, state, control)

    def on_train_end(self: Any, args: Any, state: Any, control: Any) -> Any:
        STATE["train_completed"] += 1
        write_state()
        return real_end(self, args, state, control)

    handler.__init__ = __init__
    handler.on_train_begin = on_train_begin
    handler.on_step_end = on_step_end
    handler.on_train_end = on_train_end


@on_import("transformers.trainer")
def patch_trainer(mod: Any) -> None:
    trainer_cls = mod.Trainer
    real_train, real_save = trainer_cls.train, trainer_cls.save_model

    def train(self: Any, *args: Any, **kwargs: Any) -> Any:
        if kwargs.pop("resume_from_checkpoint", None):
            notice("resume_from_checkpoint ignored (smoke runs start fresh)")
        return real_train(self, *args, **kwargs)

    def save_model(self: Any, output_dir: Any = None, *args: Any, **kwargs: Any) -> Any:
        return real_save(self, redirect(output_dir) if output_dir is not None else None, *args, **kwargs)

    def push_to_hub(self: Any, *args: Any, **kwargs: Any) -> None:
        notice(f"{type(self).__name__}.push_to_hub() skipped (smoke runs never push)")
        return None

    trainer_cls.train = train
    trainer_cls.save_model = save_model
    trainer_cls.push_to_hub = push_to_hub


# ----------------------------------------------------------------------------------------------------- peft
def _stand_in_adapter(model: Any, model_id: Any, is_trainable: bool) -> Any:
    from peft import LoraConfig, get_peft_model

    notice(f"adapter {os.fspath(model_id)!r} -> fresh tiny LoRA adapter (r=8)")
    return get_peft_model(model, LoraConfig(r=8, lora_alpha=16, inference_mode=not is_trainable))


@on_import("peft.peft_model")
def patch_peft_model(mod: Any) -> None:
    """`PeftModel.from_pretrained(model, "org/adapter")`: a hub adapter (or a local one that is not there) becomes a
    fresh LoRA adapter on the tiny model; adapters that exist on disk load for real."""
    real = mod.PeftModel.from_pretrained.__func__

    def from_pretrained(cls: Any, model: Any, model_id: Any, *args: Any, **kwargs: Any) -> Any:
        if os.path.isdir(os.fspath(model_id)):
            return real(cls, model, model_id, *args, **kwargs)
        return _stand_in_adapter(model, model_id, bool(kwargs.get("is_trainable", False)))

    mod.PeftModel.from_pretrained = classmethod(from_pretrained)


@on_import("peft.auto")
def patch_auto_peft(mod: Any) -> None:
    """`AutoPeftModelForCausalLM.from_pretrained("org/adapter")`: tiny base model of the auto class + a fresh adapter."""
    base = getattr(mod, "_BaseAutoPeftModel", None)
    if base is None:
        return
    real = base.from_pretrained.__func__

    def from_pretrained(cls: Any, pretrained_model_name_or_path: Any, *args: Any, **kwargs: Any) -> Any:
        if os.path.isdir(os.fspath(pretrained_model_name_or_path)):
            return real(cls, pretrained_model_name_or_path, *args, **kwargs)
        target = getattr(cls, "_target_class", None)
        kind = _kind_of(target) if target is not None else "causal-lm"
        model = _standins().tiny_model_for(pretrained_model_name_or_path, kind, dict(kwargs))
        return _stand_in_adapter(model, pretrained_model_name_or_path, bool(kwargs.get("is_trainable", False)))

    base.from_pretrained = classmethod(from_pretrained)


# ------------------------------------------------------------------------------------------------- datasets
@on_import("datasets.load")
def patch_load_dataset(mod: Any) -> None:
    real_load, real_from_disk = mod.load_dataset, mod.load_from_disk

    def _exists(value: Any) -> bool:
        if value is None:
            return False
        if isinstance(value, dict):
            return all(_exists(v) for v in value.values())
        if isinstance(value, (list, tuple)):
            return bool(value) and all(_exists(v) for v in value)
        text = os.fspath(value)
        if any(ch in text for ch in "*?["):
            import glob

            return bool(glob.glob(text))
        return os.path.exists(text)

    def load_dataset(path: Any, name: Any = None, data_dir: Any = None, data_files: Any = None, split: Any = None,
                     *args: Any, **kwargs: Any) -> Any:
        local = (data_files is not None and _exists(data_files)) or (
            data_files is None and os.path.exists(os.fspath(path)))
        if local:
            return real_load(path, name, data_dir, data_files, split, *args, **kwargs)
        label = path if data_files is None else f"{path}:{data_files}"
        return _standins().synthetic_dataset(str(label), split, streaming=bool(kwargs.get("streaming")))

    def load_from_disk(dataset_path: Any, *args: Any, **kwargs: Any) -> Any:
        if os.path.exists(os.fspath(dataset_path)):
            return real_from_disk(dataset_path, *args, **kwargs)
        return _standins().synthetic_dataset(str(dataset_path))

    mod.load_dataset = load_dataset
    mod.load_from_disk = load_from_disk


@on_import("datasets.arrow_dataset")
def patch_dataset(mod: Any) -> None:
    ds_cls = mod.Dataset
    real_rename, real_renames = ds_cls.rename_column, ds_cls.rename_columns

    def rename_column(self: Any, original_column_name: str, new_column_name: str, *a: Any, **kw: Any) -> Any:
        if _standins().is_synthetic(self) and new_column_name in self.column_names \
                and new_column_name != original_column_name:
            self = self.remove_columns(new_column_name)  # synthetic data has every column; keep the user's rename
        return real_rename(self, original_column_name, new_column_name, *a, **kw)

    def rename_columns(self: Any, column_mapping: dict[str, str], *a: Any, **kw: Any) -> Any:
        if _standins().is_synthetic(self):
            clash = [n for o, n in column_mapping.items() if n in self.column_names and n not in column_mapping]
            if clash:
                self = self.remove_columns(clash)
        return real_renames(self, column_mapping, *a, **kw)

    def push_to_hub(self: Any, repo_id: Any = None, *a: Any, **kw: Any) -> None:
        notice(f"Dataset.push_to_hub({repo_id!r}) skipped (smoke runs never push)")

    # A script sized for the real data (`select(range(100000))`, `ds[99999]`, `train_test_split(test_size=2000)`)
    # gets a synthetic dataset that is large enough, instead of failing inside the stand-in.
    real_select, real_getitem, real_split = ds_cls.select, ds_cls.__getitem__, ds_cls.train_test_split

    def select(self: Any, indices: Any, *a: Any, **kw: Any) -> Any:
        if _standins().is_synthetic(self):
            top = _largest_index(indices)
            if top is not None and top >= len(self):
                self = _standins().grown(self, top + 1)
        return real_select(self, indices, *a, **kw)

    def __getitem__(self: Any, key: Any) -> Any:
        if isinstance(key, int) and not isinstance(key, bool) and _standins().is_synthetic(self) and len(self) \
                and not -len(self) <= key < len(self):
            notice(f"synthetic dataset row {key} read as row {key % len(self)} (the stand-in has {len(self)} rows)")
            key = key % len(self)
        return real_getitem(self, key)

    def train_test_split(self: Any, test_size: Any = None, train_size: Any = None, *a: Any, **kw: Any) -> Any:
        if _standins().is_synthetic(self):
            wanted = sum(int(v) for v in (test_size, train_size) if isinstance(v, int) and not isinstance(v, bool))
            if wanted >= len(self):
                self = _standins().grown(self, wanted + 2)
        return real_split(self, test_size, train_size, *a, **kw)

    # ... and processing a synthetic dataset grown that large (`map`, `filter`: a trainer tokenizing 100,000 rows for
    # two steps) takes its first MAP_ROWS rows only.
    real_map, real_filter = ds_cls.map, ds_cls.filter

    def _capped(self: Any, what: str) -> Any:
        if _standins().is_synthetic(self) and len(self) > MAP_ROWS:
            notice(f"{what} on a synthetic dataset of {len(self)} rows: its first {MAP_ROWS} rows are processed")
            return real_select(self, range(MAP_ROWS))
        return self

    def map(self: Any, *a: Any, **kw: Any) -> Any:
        return real_map(_capped(self, "map"), *a, **kw)

    def filter(self: Any, *a: Any, **kw: Any) -> Any:
        return real_filter(_capped(self, "filter"), *a, **kw)

    ds_cls.rename_column = rename_column
    ds_cls.rename_columns = rename_columns
    ds_cls.push_to_hub = push_to_hub
    ds_cls.map = map
    ds_cls.filter = filter
    ds_cls.select = select
    ds_cls.__getitem__ = __getitem__
    ds_cls.train_test_split = train_test_split


def _largest_index(indices: Any) -> int | None:
    """The largest row index a `select` asks for, when it can be known without consuming an iterator."""
    if isinstance(indices, range):
        return max(indices) if len(indices) else None
    if isinstance(indices, (list, tuple)):
        ints = [i for i in indices if isinstance(i, int)]
        return max(ints) if ints else None
    if hasattr(indices, "max") and hasattr(indices, "__len__"):  # numpy arrays, tensors
        try:
            return int(indices.max()) if len(indices) else None
        except (TypeError, ValueError):
            return None
    return None


@on_import("datasets.dataset_dict")
def patch_dataset_dict(mod: Any) -> None:
    def push_to_hub(self: Any, repo_id: Any = None, *a: Any, **kw: Any) -> None:
        notice(f"DatasetDict.push_to_hub({repo_id!r}) skipped (smoke runs never push)")

    mod.DatasetDict.push_to_hub = push_to_hub


# ------------------------------------------------------------------------------------------ --learn N (reward)
# The learning check. The trainer keeps the user's algorithm settings (loss type, beta, epsilon, temperature,
# num_generations, scaling) but learns a task with a known optimum that a tiny random model can reach in a few dozen
# steps: the share of completion tokens whose id is even (about 0.5 for a random model, 1.0 at the optimum). The
# user's own reward functions still run on every batch, and the hook records how often they gave every completion of
# a prompt the same reward (such groups carry no learning signal in GRPO/RLOO). The parent turns both into a verdict.
def _known_optimum_reward(completion_ids: Any) -> list[float]:
    out = []
    for ids in completion_ids:
        ids = list(ids.tolist() if hasattr(ids, "tolist") else ids)
        out.append(sum(1 for t in ids if int(t) % 2 == 0) / len(ids) if ids else 0.0)
    return out


def _zero_std_share(prompts: Any, rewards: Any) -> float | None:
    """Share of prompts whose completions all got the same (combined) reward."""
    groups: dict[str, list[float]] = {}
    for prompt, reward in zip(prompts, rewards):
        groups.setdefault(json.dumps(prompt, default=str, sort_keys=True), []).append(float(reward))
    sized = [g for g in groups.values() if len(g) > 1]
    if not sized:
        return None
    return sum(1 for g in sized if max(g) - min(g) < 1e-9) / len(sized)


_GRPO_REWARD_ARGS = ("inputs", "prompts", "completions", "completion_ids_list")


def _learning_rewards(real: Callable[..., Any], arg_names: tuple[str, ...]) -> Callable[..., Any]:
    """Wrap a trainer's reward computation (positional parameters `arg_names`): run the user's rewards for the
    statistics, hand the trainer the known-optimum reward in the same shape."""
    def calculate(self: Any, *args: Any, **kwargs: Any) -> Any:
        import torch

        user = real(self, *args, **kwargs)
        bound = dict(zip(arg_names, args)) | kwargs
        prompts, completion_ids = bound.get("prompts"), bound.get("completion_ids_list")
        weights = getattr(self, "reward_weights", None)
        combined = user if user.dim() == 1 else (user * weights.to(user.device).unsqueeze(0)).nansum(dim=1) \
            if weights is not None else user.nansum(dim=1)
        known = torch.tensor(_known_optimum_reward(completion_ids), dtype=user.dtype, device=user.device)
        learn = STATE["learn"] or {"trainer": type(self).__name__, "rewards": [], "user_zero_std": [],
                                   "known_zero_std": []}
        learn["rewards"].append(float(known.mean()))
        for key, values in (("user_zero_std", combined.tolist()), ("known_zero_std", known.tolist())):
            share = _zero_std_share(prompts or [], values)
            if share is not None:
                learn[key].append(share)
        STATE["learn"] = learn
        write_state()
        if user.dim() == 1:
            return known
        total = float(weights.sum()) if weights is not None else float(user.shape[1])
        out = torch.zeros_like(user)
        out[:, :] = (known / (total or 1.0)).unsqueeze(1)
        return out

    return calculate


@on_import("trl.trainer.grpo_trainer")
def patch_grpo_learning(mod: Any) -> None:
    if LEARN and hasattr(mod.GRPOTrainer, "_calculate_rewards"):
        mod.GRPOTrainer._calculate_rewards = _learning_rewards(mod.GRPOTrainer._calculate_rewards, _GRPO_REWARD_ARGS)


@on_import("trl.trainer.rloo_trainer")
def patch_rloo_learning(mod: Any) -> None:
    if LEARN and hasattr(mod.RLOOTrainer, "_calculate_rewards"):
        mod.RLOOTrainer._calculate_rewards = _learning_rewards(mod.RLOOTrainer._calculate_rewards, _GRPO_REWARD_ARGS)


@on_import("trl.experimental.online_dpo.online_dpo_trainer")
def patch_online_dpo_learning(mod: Any) -> None:
    cls = mod.OnlineDPOTrainer
    if LEARN and hasattr(cls, "_calculate_rewards_from_functions"):
        cls._calculate_rewards_from_functions = _learning_rewards(cls._calculate_rewards_from_functions,
                                                                  _GRPO_REWARD_ARGS[1:])


# ------------------------------------------------------------------------------------------------ ModelScope
# Scripts of that era often load from ModelScope instead of the Hugging Face hub. Its loaders are stood in like the
# hub's: `snapshot_download(id)` returns the id (which `from_pretrained` then stands in for), `MsDataset.load(name)` a
# synthetic dataset, and `from modelscope import AutoModelForCausalLM, AutoTokenizer, ...` the transformers classes
# (which are patched). The whole package is replaced, installed or not: a smoke run is offline and ModelScope's role in
# a training script is loading.
_MODELSCOPE_MODULES = ("modelscope", "modelscope.hub", "modelscope.hub.snapshot_download", "modelscope.hub.api",
                       "modelscope.msdatasets", "modelscope.msdatasets.ms_dataset", "modelscope.utils",
                       "modelscope.utils.hub")


def _ms_snapshot_download(model_id: Any = None, *args: Any, **kwargs: Any) -> str:
    model_id = model_id if model_id is not None else kwargs.get("repo_id", "modelscope-model")
    notice(f"modelscope.snapshot_download({model_id!r}) -> {model_id!r} (stood in by name)")
    return str(model_id)


class _MsDataset:
    """ModelScope's `MsDataset`: `load` gives a synthetic Hugging Face dataset, which also answers `to_hf_dataset()`."""

    @staticmethod
    def load(dataset_name: Any, *args: Any, subset_name: Any = None, split: Any = None, **kwargs: Any) -> Any:
        ds = _standins().synthetic_dataset(str(dataset_name), split)
        notice(f"modelscope MsDataset.load({dataset_name!r}) -> synthetic dataset")
        for part in ds.values() if hasattr(ds, "values") else [ds]:
            part.to_hf_dataset = (lambda d: (lambda: d))(part)
        ds.to_hf_dataset = (lambda d: (lambda: d))(ds)
        return ds


def _modelscope_module(name: str) -> Any:
    import types

    module = types.ModuleType(name, "trl-compat smoke stand-in for ModelScope")
    module.__path__ = []  # a package, so submodules resolve through the finder
    module.snapshot_download = _ms_snapshot_download
    module.model_file_download = _ms_snapshot_download
    module.MsDataset = _MsDataset

    def __getattr__(attr: str) -> Any:  # `from modelscope import AutoTokenizer, ...`: the (patched) transformers class
        if attr.startswith("__"):
            raise AttributeError(attr)
        import transformers

        try:
            return getattr(transformers, attr)
        except AttributeError:
            raise AttributeError(f"module {name!r} (trl-compat smoke stand-in) has no attribute {attr!r}") from None

    module.__getattr__ = __getattr__
    return module


class _StandInLoader(importlib.abc.Loader):
    def create_module(self, spec: Any) -> Any:
        if spec.name == "modelscope":
            notice("modelscope -> stand-in (snapshot_download returns the id, MsDataset.load a synthetic dataset)")
        return _modelscope_module(spec.name)

    def exec_module(self, module: Any) -> None:
        return None


class _StandInFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in _MODELSCOPE_MODULES:
            return None
        return importlib.util.spec_from_loader(fullname, _StandInLoader(), is_package=True)


# ------------------------------------------------------------------------- classic PPO step loop (TRL <= 0.11)
def _one_batch_of_completions(trainer_cls: Any) -> None:
    """Trainer-style PPO's `generate_completions()` walks the whole eval set; `sampling=True` stops after one batch."""
    real = getattr(trainer_cls, "generate_completions", None)
    if real is None:
        return

    def generate_completions(self: Any, sampling: bool = False, *args: Any, **kwargs: Any) -> Any:
        return real(self, True, *args, **kwargs)

    trainer_cls.generate_completions = generate_completions


@on_import("trl.experimental.ppo.ppo_trainer")
def patch_experimental_ppo(mod: Any) -> None:
    _one_batch_of_completions(mod.PPOTrainer)


@on_import("trl.trainer.ppov2_trainer")
def patch_ppov2(mod: Any) -> None:
    _one_batch_of_completions(mod.PPOv2Trainer)


@on_import("trl.trainer.ppo_trainer")
def patch_classic_ppo(mod: Any) -> None:
    trainer_cls = getattr(mod, "PPOTrainer", None)
    if trainer_cls is not None and hasattr(trainer_cls, "train"):
        _one_batch_of_completions(trainer_cls)
    if trainer_cls is None or not hasattr(trainer_cls, "step") or hasattr(trainer_cls, "train"):
        return  # Trainer-style PPO: covered by the Trainer patches
    real_step = trainer_cls.step

    def step(self: Any, *args: Any, **kwargs: Any) -> Any:
        stats = real_step(self, *args, **kwargs)
        STATE["steps"] += 1
        write_state()
        if STATE["steps"] >= MAX_STEPS:
            STATE["stopped_by_smoke"] = True
            notice(f"classic PPO loop stopped after {STATE['steps']} steps")
            raise SmokeStop(0)
        return stats

    trainer_cls.step = step


@on_import("trl.trainer.ppo_config")
def patch_classic_ppo_config(mod: Any) -> None:
    cfg = getattr(mod, "PPOConfig", None)
    if cfg is None or not dataclasses.is_dataclass(cfg) or "ppo_epochs" not in {f.name for f in dataclasses.fields(cfg)}:
        return
    real = getattr(cfg, "__post_init__", None)

    def __post_init__(self: Any) -> None:
        self.batch_size, self.mini_batch_size, self.gradient_accumulation_steps = 2, 2, 1
        self.ppo_epochs, self.log_with, self.steps = 1, None, MAX_STEPS * 2
        notice("classic PPOConfig forced for smoke: batch_size=2, mini_batch_size=2, ppo_epochs=1, log_with=None")
        if real is not None:
            real(self)

    cfg.__post_init__ = __post_init__


# ------------------------------------------------------------------------------------------------ exceptions
def _excepthook(exc_type: Any, exc: BaseException, tb: Any) -> None:
    try:
        record_exception(exc_type, exc, tb)
    finally:
        _previous_excepthook(exc_type, exc, tb)


_previous_excepthook = sys.excepthook


def record_exception(exc_type: Any, exc: BaseException, tb: Any) -> None:
    frames = [[f.filename, f.lineno, f.name, f.line] for f in traceback.extract_tb(tb)]
    if isinstance(exc, SyntaxError) and exc.filename:
        frames.append([exc.filename, exc.lineno, "<module>", (exc.text or "").strip()])
    STATE["exception"] = {
        "type": exc_type.__name__,
        "module": getattr(exc_type, "__module__", ""),
        "message": str(exc),
        "frames": frames,
        "traceback": "".join(traceback.format_exception(exc_type, exc, tb))[-8000:],
    }
    write_state()


def install() -> None:
    """Switch smoke mode on in this interpreter: patches on import, offline network, state reporting."""
    global _owner, _installed, MAX_STEPS, TMP, LEARN
    if _installed:
        return
    _installed = True
    owner = os.environ.get(ENV_OWNER)
    if not owner:
        os.environ[ENV_OWNER] = str(os.getpid())
        _owner = True
    else:
        _owner = owner == str(os.getpid())
    MAX_STEPS = int(os.environ.get(ENV_MAX_STEPS, "2"))
    LEARN = int(os.environ.get(ENV_LEARN, "0") or 0)
    if LEARN:
        MAX_STEPS = LEARN
    TMP = os.path.abspath(os.environ.get(ENV_TMP) or os.path.join(os.getcwd(), ".trl-compat-smoke"))
    block_network()
    sys.meta_path.insert(0, _PostImportFinder())
    sys.meta_path.insert(0, _StandInFinder())
    stacks = os.environ.get(ENV_STACKS)
    if stacks and _owner:  # the runner asks for every thread's stack (SIGUSR1) before it kills a run that timed out
        import faulthandler
        import signal

        global _stacks_file
        _stacks_file = open(stacks, "w", encoding="utf-8")  # noqa: SIM115 (kept open for the signal handler)
        faulthandler.register(signal.SIGUSR1, file=_stacks_file, all_threads=True)
    for name in list(_HOOKS):
        if name in sys.modules:
            _run_hooks(name, sys.modules[name])
    if _owner:
        sys.excepthook = _excepthook
        atexit.register(write_state)
        write_state()
