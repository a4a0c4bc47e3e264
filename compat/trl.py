"""`from compat.trl import GRPOTrainer, BCOTrainer, ...`: one import line that works on every supported TRL line.

Each name resolves, on first use, to the installed TRL's object wherever that version keeps it (top level or
`trl.experimental.*`), and to `reference_impl`'s implementation where the installed TRL has none (BCO on TRL >= 1.14,
the `trl.losses` names on TRL >= 1.14, DDPO / AlignProp and their pipelines on TRL >= 0.24 (`reference_impl.diffusion`),
every trainer when TRL is not installed at all). Importing this module imports neither torch nor trl; see
`compat.resolve` for the rules (lazy, cached, one notice per name saying which implementation was chosen).

Two small helpers TRL removed in 1.15 without a replacement function (`prepare_multimodal_messages_vllm`,
`dft_loss`) fall back to faithful copies kept here, so migrated code keeps its behaviour; the migrations point code at
these names and explain the TRL-native successor in MIGRATION.md. TRL 0.x helpers that no supported line has
(`setup_chat_format`, `get_kbit_device_map`, ...) are kept the same way; the bigger ones live in their own modules,
imported on first use: `compat._sft_data` (`DataCollatorForCompletionOnlyLM`, `ConstantLengthDataset`, TRL 0.19.1),
`compat._dataset_formatting` (`trl.extras.dataset_formatting`: the 0.26.2 formatting functions, 1.12.0's
`FORMAT_MAPPING`), `compat._script_args` (`SFTScriptArguments`, `DPOScriptArguments`, `RewardScriptArguments`, TRL 0.12.2) and
`compat._judges` (the judges of TRL 1.0.0) and `compat._trainer_utils` (`PeftSavingCallback`, TRL 0.7.4; the PPOv2 / RLOO
generation helpers `batch_generation`, `forward`, ..., TRL 0.26.2; the PPO (v1) helpers `AdaptiveKLController`,
`stack_dicts`, `PPODecorators`, `RunningMoments`, `BaseTrainer`, ...; `exact_div`, `compute_accuracy`,
`OnlineTrainerState`, the old `prepare_deepspeed`, `neftune_post_forward_hook`), and `compat._env_utils` (`strtobool`, TRL 0.12.2's `trl.env_utils`). These names are not TRL's:
`AutoModelForVision2Seq`, transformers' own class where the installed transformers has it (up to 4.57) and
`AutoModelForImageTextToText` on 5.x, which maps every model type 4.56/4.57's Vision2Seq mapped to the same class
(rule `auto-model-for-vision2seq`); `warmup` (`_warmup`), the
warmup keywords of the installed transformers for code written with `warmup_ratio=`, which transformers 5.15 removed
(rule `warmup-ratio`), `length_grouping` (`_length_grouping`), its keyword for code written with
`group_by_length=`, which transformers 5.2 removed (rule `group-by-length`), and `tensorboard_dir`
(`_tensorboard_dir`), the same for `logging_dir=`, which transformers 5.15 removed (rule `logging-dir`), and
`AdamW` (`compat._optim`), transformers' own optimizer of 4.49 and before, which 4.50 removed (rule `removed-adamw`),
`prepare_model_for_int8_training` (`compat._peft`), peft 0.2's function, for code passing its keywords (rule
`removed-int8-training`), `trainer_config` (`_trainer_config`), the trainer's config built with the keywords TRL 0.13 took from the trainers,
for an `args` the migration cannot see (rule `trainer-kwargs-to-config`), and `batched_formatting`
(`_batched_formatting`), a TRL <= 0.15 formatting function (called on a batch) for the per-example call of 0.16+
(rule `sft-batched-formatting-func`), and `with_return_all_scores` (`_with_return_all_scores`), a text-classification
pipeline answering transformers 4.x's `return_all_scores=`, which transformers 5 ignores (rule
`pipeline-return-all-scores`), and `loss_kwargs_ignored` (`_loss_kwargs_ignored`), 4.45's loss scaling for a Trainer
subclass whose `compute_loss` ignores `num_items_in_batch` (rule `compute-loss-num-items`).
"""

from __future__ import annotations

import copy
import dataclasses
import os
from collections.abc import Callable
from typing import Any

import compat
from compat._exports import TRL_CANDIDATES
from compat.resolve import NameTable

compat._check_deferred()  # compat loaded by the migrator library first: check now (see compat/__init__.py)

_CANDIDATES = TRL_CANDIDATES

TABLE = NameTable(__name__, _CANDIDATES)
TABLE.install(globals())


def _prepare_multimodal_messages_vllm(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copy of TRL <= 1.14 `trl.data_utils.prepare_multimodal_messages_vllm`: `image` blocks -> `image_pil` blocks.

    TRL >= 1.15's vLLM client accepts `{"type": "image", "image": PIL}` blocks as they are, so with TRL's own
    generation this call is no longer needed; it is kept for code that hands the messages to vLLM itself.
    """
    messages = copy.deepcopy(messages)
    for message in messages:
        if isinstance(message["content"], list):
            for part in message["content"]:
                if part["type"] == "image":
                    part["type"] = "image_pil"
                    part["image_pil"] = part.pop("image")
    return messages


def _dft_loss(outputs: Any, labels: Any, num_items_in_batch: Any = None) -> Any:
    """Copy of TRL <= 1.14 `trl.trainer.sft_trainer.dft_loss` (DFT, arXiv 2508.05629), for `compute_loss_func`.

    On TRL >= 1.15 prefer `SFTConfig(loss_type="dft")`, which computes the same loss inside the trainer.
    """
    import torch

    labels = torch.nn.functional.pad(labels, (0, 1), value=-100)
    shift_labels = labels[..., 1:]
    loss_mask = shift_labels != -100
    shift_labels[~loss_mask] = 0
    logits = outputs.logits
    logprobs = torch.gather(logits.log_softmax(-1), -1, shift_labels.unsqueeze(-1)).squeeze(-1)
    per_token_loss = -logprobs.exp().detach() * logprobs
    if num_items_in_batch is None:
        num_items_in_batch = loss_mask.sum()
    return (per_token_loss * loss_mask).sum() / num_items_in_batch


# -- TRL 0.x helpers ----------------------------------------------------------------------------------------------

# trl.trainer.utils.SIMPLE_QUERY_CHAT_TEMPLATE (TRL 0.9 - 0.10) and SIMPLE_SFT_CHAT_TEMPLATE (0.9 - 0.24), verbatim
_SIMPLE_QUERY_CHAT_TEMPLATE = "{% for message in messages %}{{' ' + message['content']}}{% endfor %}"
_SIMPLE_SFT_CHAT_TEMPLATE = "{% for message in messages %}{{' ' + message['content']}}{% endfor %}{{ eos_token }}"

# trl.trainer.utils.SIMPLE_CHAT_TEMPLATE (TRL 0.11 - 0.26), verbatim
_SIMPLE_CHAT_TEMPLATE = (
    "{% for message in messages %}{{message['role'].capitalize() + ': ' + message['content'] + '\n\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}"
)


def _setup_chat_format(model: Any, tokenizer: Any, format: str | None = "chatml",
                       resize_to_multiple_of: int | None = None) -> tuple[Any, Any]:
    """Copy of TRL 0.8 - 0.12 `trl.setup_chat_format` (removed in TRL 0.26): ChatML special tokens and template.

    The PPO-era body: the embedding is resized to `len(tokenizer)` and an existing chat template is overwritten
    (TRL 0.13 - 0.25 raised instead, 0.19 - 0.25 resized to `len(tokenizer.vocab)`). TRL's own successor,
    `trl.clone_chat_template`, copies another model's template and tokens, which is a different operation.
    """
    if format != "chatml":
        raise ValueError(f"Format {format} not available. Please use one of dict_keys(['chatml'])")
    bos, eos = "<|im_start|>", "<|im_end|>"
    tokenizer.eos_token = eos
    tokenizer.pad_token = eos
    tokenizer.bos_token = bos
    tokenizer.add_special_tokens({"additional_special_tokens": [bos, eos]})
    tokenizer.chat_template = (
        "{% for message in messages %}"
        f"{{{{'{bos}' + message['role'] + '\n' + message['content'] + '{eos}' + '\n'}}}}"
        "{% endfor %}"
        "{% if add_generation_prompt %}"
        f"{{{{ '{bos}assistant\n' }}}}"
        "{% endif %}"
    )
    model.resize_token_embeddings(len(tokenizer), pad_to_multiple_of=resize_to_multiple_of)
    if getattr(model, "config", None) is not None:
        model.config.pad_token_id = tokenizer.pad_token_id
        model.config.bos_token_id = tokenizer.bos_token_id
        model.config.eos_token_id = tokenizer.eos_token_id
    if getattr(model, "generation_config", None) is not None:
        model.generation_config.bos_token_id = tokenizer.bos_token_id
        model.generation_config.eos_token_id = tokenizer.eos_token_id
        model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model, tokenizer


def _get_exp_cap(value: Any, decimal: int = 4) -> Any:
    """Copy of TRL <= 0.28 `trl.trainer.utils.get_exp_cap`: log(dtype max), floored to `decimal` places."""
    import torch

    vdtype_max = torch.zeros([1]).to(value.dtype) + torch.finfo(value.dtype).max
    vdtype_log_max = torch.log(vdtype_max).to(value.device)
    return torch.floor(vdtype_log_max * 10**decimal) / 10**decimal if decimal > 0 else vdtype_log_max


def _cap_exp(value: Any, cap: float = -1) -> Any:
    """Copy of TRL <= 0.28 `trl.trainer.utils.cap_exp`: `exp` with the exponent capped below overflow."""
    import torch

    cap = _get_exp_cap(value) if cap < 0 else cap
    return torch.exp(torch.clamp(value, max=cap))


def _is_wandb_available() -> bool:
    """Copy of TRL <= 0.10 `trl.import_utils.is_wandb_available`: is the `wandb` package importable?

    Unlike `transformers.integrations.is_wandb_available` it ignores `WANDB_DISABLED` / `WANDB_MODE`.
    """
    from importlib.util import find_spec

    return find_spec("wandb") is not None


def _is_diffusers_available() -> bool:
    """Copy of TRL 0.11 - 0.23 `trl.import_utils.is_diffusers_available` (removed in 0.24): is the `diffusers` package
    importable and installed (its metadata readable), the check of the transformers helper those releases called
    (`_is_package_available`; TRL <= 0.10 checked `find_spec` alone, the same answer for an installed package).

    `transformers.utils` exports no probe of that package in 4.56 (the oldest transformers TRL 1.13+ allow), so the
    migration cannot point there.
    """
    from importlib.metadata import PackageNotFoundError, version
    from importlib.util import find_spec

    if find_spec("diffusers") is None:
        return False
    try:
        version("diffusers")
    except PackageNotFoundError:
        return False
    return True


def _batched_formatting(func: Callable[[dict[str, list[Any]]], list[str]]) -> Callable[[dict[str, Any]], str]:
    """`SFTTrainer(formatting_func=batched_formatting(f))`: `f` written for TRL <= 0.15, which called a formatting
    function on a batch of rows (a dict of columns, `dataset.map(..., batched=True)`) and refused anything but a
    list of strings back (0.12.2 - 0.15's "The `formatting_func` should return a list of processed strings"); TRL
    0.16+ calls it on one example (`dataset.map(..., batched=False)`) and wants one string (rule
    `sft-batched-formatting-func`). The returned function calls `f` on a batch holding that one example and returns
    the single string it gives; any other count is a `ValueError` naming `f`, not a silent mix-up."""

    def formatting_func(example: dict[str, Any]) -> str:
        texts = func({key: [value] for key, value in example.items()})
        if not isinstance(texts, list) or len(texts) != 1:
            raise ValueError(f"{getattr(func, '__name__', func)!r} returned {texts!r} for a batch of one example: "
                             "batched_formatting expects one string per row of the batch")
        return texts[0]

    formatting_func.__name__ = getattr(func, "__name__", "formatting_func")
    return formatting_func


def _importable(package: str) -> bool:
    """TRL 1.0.0 `trl.import_utils._is_package_available(package)` as its probes called it (no version asked):
    `importlib.util.find_spec(package) is not None`."""
    from importlib.util import find_spec

    return find_spec(package) is not None


def _is_fastapi_available() -> bool:
    """Copy of TRL 0.16 - 1.10 `trl.import_utils.is_fastapi_available` (removed in 1.11; the vLLM server's check)."""
    return _importable("fastapi")


def _is_pydantic_available() -> bool:
    """Copy of TRL 0.16 - 1.10 `trl.import_utils.is_pydantic_available` (removed in 1.11)."""
    return _importable("pydantic")


def _is_uvicorn_available() -> bool:
    """Copy of TRL 0.16 - 1.10 `trl.import_utils.is_uvicorn_available` (removed in 1.11)."""
    return _importable("uvicorn")


def _is_vllm_ascend_available() -> bool:
    """Copy of TRL 0.17 - 1.10 `trl.import_utils.is_vllm_ascend_available` (removed in 1.11)."""
    return _importable("vllm_ascend")


def _is_llm_blender_available() -> bool:
    """Copy of TRL 0.12 - 1.1 `trl.import_utils.is_llm_blender_available` (exported by `trl` until 0.16, removed in
    1.2) and of 0.10 - 0.11's `is_llmblender_available`: is `llm_blender` (PairRM's package) importable?"""
    return _importable("llm_blender")


def _warmup(ratio: float, steps: float | None = None) -> dict[str, float]:
    """`TrainingArguments(**warmup(ratio))` / `SFTConfig(**warmup(ratio, steps=n))`: the warmup keywords of the
    installed transformers, for code written with `warmup_ratio=` (rule `warmup-ratio`).

    Where the installed `TrainingArguments` still has the field `warmup_ratio` (transformers <= 5.14) this returns the
    keywords as they were written (`warmup_ratio=`, and `warmup_steps=` when given): the call is the original one.
    transformers 5.15 removed the field; 5.x reads a `warmup_steps` below 1 as a ratio of the training steps (5.0-5.14
    turned `warmup_ratio` into exactly that), so there this returns `warmup_steps=` chosen as transformers 4.x chose
    (`get_warmup_steps`: the steps when they are above 0, else the ratio). A ratio of 1 or more (4.x took 1.0 as
    "warm up over every step") has no 5.15+ spelling as a ratio: `ValueError`.
    """
    import dataclasses

    from transformers import TrainingArguments

    if any(f.name == "warmup_ratio" for f in dataclasses.fields(TrainingArguments)):
        return {"warmup_ratio": ratio} if steps is None else {"warmup_ratio": ratio, "warmup_steps": steps}
    if steps is not None and steps > 0:
        return {"warmup_steps": steps}
    if not 0 <= ratio < 1:
        raise ValueError(f"warmup ratio {ratio!r}: transformers 5.15+ takes a ratio as warmup_steps in [0, 1); "
                         "pass a number of steps (warmup_steps=N) instead")
    return {"warmup_steps": ratio}


def _length_grouping(group_by_length: bool) -> dict[str, Any]:
    """`SFTConfig(**length_grouping(flag))`: the length-grouping keyword of the installed transformers, for code
    written with `group_by_length=`, which transformers 5.2 removed (rule `group-by-length`).

    Where the installed `TrainingArguments` still has the field `group_by_length` (transformers <= 5.1) this returns
    the keyword as it was written: the call is the original one. 5.2 replaced it with `train_sampling_strategy`,
    whose `"group_by_length"` builds the samplers 4.x built for `group_by_length=True` (a `LengthGroupedSampler` for
    training and for evaluation) and whose default `"random"` the sampler of `group_by_length=False`; so there this
    returns `train_sampling_strategy="group_by_length"` for a true flag and nothing (the default) for a false one.
    """
    import dataclasses

    from transformers import TrainingArguments

    if any(f.name == "group_by_length" for f in dataclasses.fields(TrainingArguments)):
        return {"group_by_length": group_by_length}
    return {"train_sampling_strategy": "group_by_length"} if group_by_length else {}


_loss_kwargs_ignored = property(
    lambda self: False, lambda self, value: None,
    doc="""`model_accepts_loss_kwargs = loss_kwargs_ignored` in a `transformers.Trainer` subclass whose `compute_loss`
    ignores `num_items_in_batch` (written before transformers 4.46 passed it): the attribute reads False whatever
    `Trainer.__init__` sets, as transformers' own docstring of `compute_loss` asks for such an override. Then the
    Trainer counts no items and divides each micro-batch's loss by the gradient accumulation steps, as 4.45 did (the
    4.45 `Accelerator.backward`); with True, a batch with `labels` on a model taking `**kwargs` would not be divided.""")


def _with_return_all_scores(pipe: Any, return_all_scores: bool | None = None) -> Any:
    """`with_return_all_scores(pipeline("sentiment-analysis", ...))`: a text-classification pipeline that answers
    `return_all_scores=` as transformers 4.x did (rule `pipeline-return-all-scores`), on every transformers.

    transformers 4.x (4.56.2 wheel) read `return_all_scores=True`, given when the pipeline was built or called, as
    "every label's score, in label-id order" (`output[1]["score"]` is label 1's), nested in one more list for a single
    string; `False` as the top label only. transformers 5 dropped the keyword: it reaches the tokenizer, which ignores
    it, and the call answers the top label alone (`output[1]` is a KeyError). The pipeline returned here (the same
    object, its class a subclass of its own) takes `return_all_scores=` on each call (the default: the value given
    here) and asks for `top_k=None` (every label, sorted by score), put back in label-id order and nesting (a
    pipeline built with `top_k=` kept 4.x's score order). A call that passes `top_k` too gets what 4.x gave it:
    `top_k` wins. A pipeline of another kind is returned unchanged.
    """
    from transformers import TextClassificationPipeline

    if not isinstance(pipe, TextClassificationPipeline):
        return pipe
    base = type(pipe)
    label_ids: dict[str, int] = {}
    for i, label in sorted(pipe.model.config.id2label.items()):
        label_ids.setdefault(label, i)

    def in_label_order(row: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return sorted(row, key=lambda d: label_ids.get(d["label"], len(label_ids)))

    class AllScores(base):  # type: ignore[misc, valid-type]
        def __call__(self, inputs: Any = None, *args: Any, **kwargs: Any) -> Any:
            all_scores = kwargs.pop("return_all_scores", return_all_scores)
            if not all_scores or "top_k" in kwargs:
                return base.__call__(self, inputs, *args, **kwargs)
            out = base.__call__(self, inputs, *args, top_k=None, **kwargs)
            # a pipeline built with `top_k=` sorted by score in 4.x too (its built parameters were not `_legacy`)
            order = in_label_order if self._postprocess_params.get("_legacy", True) else (lambda row: row)
            if isinstance(inputs, str):  # one text: 4.x nested its labels in one more list
                return [order(out)]
            if isinstance(out, list) and out and isinstance(out[0], list):
                return [order(row) for row in out]
            if isinstance(out, list):  # one text pair ({"text": ..., "text_pair": ...}): not nested
                return order(out)
            return (order(row) for row in out)  # a generator (dataset or generator input)

    AllScores.__name__ = AllScores.__qualname__ = base.__name__
    AllScores.__module__ = base.__module__
    pipe.__class__ = AllScores
    return pipe


def _tensorboard_dir(folder: str | os.PathLike[str] | None, *, tensorboard: bool = False) -> dict[str, Any]:
    """`TrainingArguments(**tensorboard_dir(folder))`: the keyword of the installed transformers for code written
    with `logging_dir=`, which transformers 5.15 removed (rule `logging-dir`).

    Where the installed `TrainingArguments` still has the field (transformers <= 5.14) this returns the keyword as
    it was written: the call is the original one. On 5.15+ nothing: only the TensorBoard callback read the field.
    With `tensorboard=True` (the rule writes it where `report_to=` may turn TensorBoard on) 5.15+ gets the folder
    where its TensorBoard callback looks for it: the environment variable `TENSORBOARD_LOGGING_DIR`, read when the
    Trainer is built (after its config), so the run logs where it did. The variable is the process's: every Trainer
    built after this call logs there (the rule writes it only in a module that sets one folder).
    """
    import dataclasses

    from transformers import TrainingArguments

    if any(f.name == "logging_dir" for f in dataclasses.fields(TrainingArguments)):
        return {"logging_dir": folder}
    if tensorboard and folder is not None:
        os.environ["TENSORBOARD_LOGGING_DIR"] = os.fspath(folder)
    return {}


def _trainer_config(config: type, args: Any, **fields: Any) -> Any:
    """`SFTTrainer(args=trainer_config(SFTConfig, training_args, max_length=n))`: the trainer's TRL config with the
    keywords TRL 0.13 removed from the trainers, for an `args` the migration cannot see built (a parameter, another
    module's object; rule `trainer-kwargs-to-config`).

    TRL 0.9 - 0.12 took those keywords and wrote them on the config (`args.max_seq_length = max_seq_length`), after
    turning a plain `TrainingArguments` into the config as `SFTConfig(**args.to_dict())` with the redacted `*_token`
    values put back (0.12.2's SFTTrainer; TRL 1.16's does the same for a TrainingArguments). This builds that config
    the same way, with the keywords passed to the constructor, so the config's `__post_init__` sees them as it would
    on the command line (`DPOConfig` turns a `loss_type` string into a list there):

    * an instance of `config` (or of a subclass): a new object of its class, its values and the keywords;
    * a `transformers.TrainingArguments` / `Seq2SeqTrainingArguments` itself: a `config` with its values and the
      keywords (the TrainingArguments values, `learning_rate` ..., stay; the config's own fields take its defaults);
    * None: `config(output_dir="tmp_trainer", **fields)`, the config TRL 0.9 - 0.12 built for no `args`;
    * a project's own `TrainingArguments` subclass all of whose fields the config has (one that only changes
      defaults, `class TrainArgs(TrainingArguments): num_train_epochs: float = 3.0`): a `config` with its values and
      the keywords, as TRL 1.x's SFTTrainer rebuilds any such object (`SFTConfig(**args.to_dict())`);
    * anything else (a TrainingArguments subclass of the project's own with fields the config lacks): `TypeError`
      naming the class and those fields, rather than a config that silently loses them.

    The object passed in is not changed (0.x set the attributes on it in place): code that reads the keyword's value
    back from it after building the trainer reads the trainer's `args` instead.
    """
    from transformers import Seq2SeqTrainingArguments, TrainingArguments

    if args is None:
        return config(output_dir="tmp_trainer", **fields)
    if isinstance(args, config):
        cls = type(args)
    elif type(args) in (TrainingArguments, Seq2SeqTrainingArguments):
        cls = config
    else:
        known = {f.name for f in dataclasses.fields(config)}
        lost = [f.name for f in dataclasses.fields(args) if f.name not in known] \
            if isinstance(args, TrainingArguments) else []
        if not isinstance(args, TrainingArguments) or lost:
            which = f" with fields {config.__name__} lacks ({', '.join(lost)})" if lost else ""
            raise TypeError(f"trainer_config: args is a {type(args).__module__}.{type(args).__qualname__}{which}, "
                            f"neither a {config.__name__} nor a transformers TrainingArguments: base that class on "
                            f"trl.{config.__name__} and set {', '.join(fields) or 'the fields'} on it")
        cls = config
    values = args.to_dict()
    values.update({k: getattr(args, k) for k in values if k.endswith("_token")})  # to_dict redacts them
    values.update(fields)
    return cls(**values)


def _get_kbit_device_map() -> dict[str, int] | None:
    """Copy of TRL <= 1.7 `trl.get_kbit_device_map`: this process's local device for k-bit (bitsandbytes) loading."""
    import torch
    from accelerate import PartialState
    from transformers.utils import is_torch_xpu_available

    if torch.cuda.is_available() or is_torch_xpu_available():
        return {"": PartialState().local_process_index}
    return None


#: TRL 0.9.2 - 1.12.0 `INVALID_LOGPROB` (`trl.trainer.rloo_trainer`, `ppov2_trainer`, `ppo_trainer`, then
#: `trl.experimental.ppo.ppo_trainer`; removed in 1.13): the log-prob the PPOv2 / RLOO loops write at padded positions.
_INVALID_LOGPROB = 1.0


class _FDivergenceConstants:
    """Copy of TRL 0.9 - 0.28 `trl.trainer.dpo_config.FDivergenceConstants` (removed in 0.29): the key and default of
    the alpha-divergence coefficient in `DPOConfig.f_divergence_params`."""

    ALPHA_DIVERGENCE_COEF_KEY = "alpha_divergence_coef"
    ALPHA_DIVERGENCE_COEF_DEFAULT = 1.0


def _is_torch_greater_2_0() -> bool:
    """Copy of TRL <= 0.11 `trl.import_utils.is_torch_greater_2_0` (removed in 0.12): the installed torch's version
    string compared with "2.0" *as a string*, as TRL did.

    True with every torch 2.x, which the supported lines imply (TRL 1.13+ needs accelerate >= 1.4, which needs
    torch >= 2.0).
    """
    from importlib.metadata import version

    return version("torch") >= "2.0"


def _trl_sanitze_kwargs_for_tagging(model: Any, tag_names: list[str], kwargs: dict[str, Any] | None = None
                                    ) -> dict[str, Any] | None:
    """Copy of TRL 0.9 - 0.13 `trl.trainer.utils.trl_sanitze_kwargs_for_tagging` (removed in 0.14): merge `tag_names`
    (plus "unsloth" for an Unsloth-patched model) into the `tags` of `push_to_hub` kwargs; `tag_names` is extended in
    place, as TRL did.

    Unsloth counts as installed as TRL 0.13 counted it (transformers' `_is_package_available`): importable and with
    distribution metadata.
    """
    import importlib.metadata
    import importlib.util

    def unsloth_available() -> bool:
        if importlib.util.find_spec("unsloth") is None:
            return False
        try:
            importlib.metadata.version("unsloth")
        except importlib.metadata.PackageNotFoundError:
            return False
        return True

    if unsloth_available():
        if hasattr(model, "config") and getattr(model.config, "unsloth_version", None) is not None:
            tag_names.append("unsloth")
    if kwargs is not None:
        if "tags" not in kwargs:
            kwargs["tags"] = tag_names
        elif "tags" in kwargs and isinstance(kwargs["tags"], list):
            kwargs["tags"].extend(tag_names)
        elif "tags" in kwargs and isinstance(kwargs["tags"], str):
            tag_names.append(kwargs["tags"])
            kwargs["tags"] = tag_names
    return kwargs
