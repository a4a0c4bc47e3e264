"""Tiny stand-ins the smoke hook hands out instead of hub downloads: models, tokenizers, configs, datasets, pipelines.

Loaded by file path inside the smoke child (see `_hook.py`), never imported by `import compat`. Everything is built
in-process from `compat/tiny.py` (random weights, a BPE tokenizer trained on a few lines), so a smoke run never needs the
network or a GPU. Each builder takes the name the user asked for and keeps what matters for the script to run the same
way: the architecture (when transformers knows it offline), the head (causal LM, seq2seq, sequence classification with
the requested `num_labels`), `config._name_or_path` (TRL reloads reference models from it), and the dataset's columns.
"""

from __future__ import annotations

import os
import re
from typing import Any, Callable

NOTICE: Callable[[str], None] = lambda msg: None  # replaced by the hook with its notice recorder
TINY: Any = None  # compat/tiny.py, loaded by the hook

# Keyword arguments of `from_pretrained` that only say where/how to load weights: accepted and ignored.
LOAD_ONLY_KWARGS = {
    "cache_dir", "force_download", "local_files_only", "token", "use_auth_token", "revision", "subfolder",
    "trust_remote_code", "device_map", "torch_dtype", "dtype", "low_cpu_mem_usage", "attn_implementation",
    "use_safetensors", "variant", "offload_folder", "offload_state_dict", "max_memory", "resume_download",
    "proxies", "mirror", "_fast_init", "output_loading_info", "use_flash_attention_2", "tp_plan", "key_mapping",
    "peft_config", "is_trainable", "adapter_name", "use_fast", "legacy", "from_slow", "add_prefix_space",
    "weights_only", "gguf_file", "state_dict", "from_tf", "from_flax", "code_revision", "_commit_hash",
    "reward_adapter", "reward_adapter_name", "summary_dropout_prob", "v_head_initializer_range",
    "v_head_init_strategy", "use_kernels", "kernel_config", "distributed_config", "return_unused_kwargs",
}
QUANT_KWARGS = ("quantization_config", "load_in_8bit", "load_in_4bit", "bnb_4bit_compute_dtype",
                "bnb_4bit_quant_type", "bnb_4bit_use_double_quant")

# (pattern on the lowercased repo id, model_type): first match wins; order matters (distilbert before bert, ...).
_NAME_HINTS: list[tuple[str, str]] = [
    (r"qwen3", "qwen3"), (r"qwen", "qwen2"), (r"smollm3", "smollm3"), (r"smollm|tinyllama|llama|vicuna|alpaca", "llama"),
    (r"mixtral|mistral|zephyr", "mistral"), (r"gemma-?3", "gemma3_text"), (r"gemma-?2", "gemma2"), (r"gemma", "gemma"),
    (r"phi-?3|phi-?4", "phi3"), (r"phi", "phi"), (r"pythia|gpt-?neox", "gpt_neox"), (r"gpt-?j", "gptj"),
    (r"gpt-?neo", "gpt_neo"), (r"gpt2|gpt-2|dialogpt", "gpt2"), (r"(^|[/_-])opt-", "opt"), (r"bloom", "bloom"),
    (r"falcon", "falcon"), (r"olmo", "olmo2"), (r"(^|[/_-])(flan-)?t5", "t5"), (r"bart", "bart"),
    (r"distilbert", "distilbert"), (r"deberta", "deberta-v2"), (r"roberta", "roberta"), (r"bert", "bert"),
]
# Extra config overrides where compat.tiny's generic dims leave a large dimension behind.
_TYPE_OVERRIDES: dict[str, dict[str, Any]] = {
    "opt": {"word_embed_proj_dim": 32, "ffn_dim": 64},
    "distilbert": {"hidden_dim": 64, "dim": 32, "n_layers": 2, "n_heads": 4},
    "phi": {"partial_rotary_factor": 0.5},
}
_MAX_PARAMS = 3_000_000
# Like most real checkpoints, the embedding matrix is a bit larger than the tokenizer (512 tokens), so scripts that add
# a pad token (`tokenizer.add_special_tokens({"pad_token": "[PAD]"})`) without resizing keep working, as they do there.
MODEL_VOCAB = 576


def infer_model_type(name: Any) -> str | None:
    """The model_type transformers would load for `name`, guessed offline from a local config or the repo id."""
    text = str(getattr(name, "name_or_path", name) or "")
    cfg = os.path.join(text, "config.json")
    if os.path.isfile(cfg):
        try:
            import json

            with open(cfg, encoding="utf-8") as fh:
                model_type = json.load(fh).get("model_type")
            if model_type:
                return str(model_type)
        except (OSError, ValueError):
            pass
    low = text.lower()
    for pattern, model_type in _NAME_HINTS:
        if re.search(pattern, low):
            return model_type
    return None


def _supports(model_type: str, kind: str) -> bool:
    from transformers import CONFIG_MAPPING
    from transformers.models.auto import modeling_auto as ma

    if model_type not in CONFIG_MAPPING:
        return False
    table = {
        "causal-lm": ma.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        "seq2seq-lm": ma.MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES,
        "sequence-classification": ma.MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES,
        "base": ma.MODEL_MAPPING_NAMES,
    }[kind]
    return model_type in table


def _fallback_type(kind: str) -> str:
    return "t5" if kind == "seq2seq-lm" else "llama"


def _config_overrides(kwargs: dict[str, Any], config: Any) -> dict[str, Any]:
    """User kwargs that are config attributes (num_labels, use_cache, ...) are applied to the tiny config."""
    out: dict[str, Any] = {}
    for key, value in kwargs.items():
        if key in LOAD_ONLY_KWARGS or key in QUANT_KWARGS or key in ("config", "model_kwargs"):
            continue
        if key in ("num_labels", "id2label", "label2id", "problem_type") or hasattr(config, key):
            out[key] = value
    return out


def _drop_quantization(name: Any, kwargs: dict[str, Any]) -> None:
    found = [k for k in QUANT_KWARGS if kwargs.get(k)]
    if found:
        NOTICE(f"quantization dropped for {name!r} ({', '.join(found)}): bitsandbytes needs a GPU; "
               "the tiny stand-in is float32 on CPU")


def tiny_config_for(name: Any, kind: str, model_type: str | None = None, **kwargs: Any) -> Any:
    """A tiny config of the requested architecture (or a tiny llama/t5), named after `name`."""
    requested = model_type or infer_model_type(name)
    chosen = requested if requested and _supports(requested, kind) else _fallback_type(kind)
    config = TINY.tiny_config(chosen, vocab_size=MODEL_VOCAB, **_TYPE_OVERRIDES.get(chosen, {}))
    if kind == "sequence-classification":
        num_labels = kwargs.get("num_labels")
        id2label = kwargs.get("id2label")
        if num_labels is None:
            num_labels = len(id2label) if id2label else 2
        config.num_labels = int(num_labels)
        if id2label is None and config.num_labels == 2:
            id2label = {0: "NEGATIVE", 1: "POSITIVE"}
        if id2label is not None:
            config.id2label = {int(k): v for k, v in id2label.items()}
            config.label2id = {v: int(k) for k, v in config.id2label.items()}
    for key, value in _config_overrides(kwargs, config).items():
        if key not in ("num_labels", "id2label", "label2id"):
            setattr(config, key, value)
    config._name_or_path = str(getattr(name, "name_or_path", name) or "")
    return config


def _with_fork_rng(fn: Callable[[], Any]) -> Any:
    """Build with a fixed seed without disturbing the user's RNG stream."""
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return fn()


def _finish(model: Any, name: Any) -> Any:
    label = str(getattr(name, "name_or_path", name) or "")
    model.config._name_or_path = label
    try:
        model.name_or_path = label
    except (AttributeError, TypeError):
        pass
    model.config.architectures = [type(model).__name__]
    n_params = sum(p.numel() for p in model.parameters())
    if n_params > _MAX_PARAMS:
        raise ValueError(f"tiny stand-in too large ({n_params} parameters)")
    return model


def tiny_model_for(name: Any, kind: str, kwargs: dict[str, Any], model_class: Any = None) -> Any:
    """A random-weight tiny model for `from_pretrained(name, **kwargs)`.

    `model_class` is a concrete transformers class (GPT2LMHeadModel, ...) when the user called its `from_pretrained`;
    otherwise `kind` selects the auto head. Unknown or unbuildable architectures fall back to a tiny llama (t5 for
    seq2seq) with a notice.
    """
    from transformers import AutoModel, AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoModelForSequenceClassification

    _drop_quantization(name, kwargs)
    user_config = kwargs.get("config")
    requested = getattr(user_config, "model_type", None) if user_config is not None and not isinstance(
        user_config, str) else None
    if model_class is not None:
        requested = getattr(getattr(model_class, "config_class", None), "model_type", None) or requested
    if user_config is not None and not isinstance(user_config, str) and hasattr(user_config, "num_labels"):
        kwargs = {"num_labels": user_config.num_labels, "id2label": getattr(user_config, "id2label", None), **kwargs}
    factory = {"causal-lm": AutoModelForCausalLM, "seq2seq-lm": AutoModelForSeq2SeqLM,
               "sequence-classification": AutoModelForSequenceClassification, "base": AutoModel}[kind]

    def build(model_type: str | None) -> Any:
        config = tiny_config_for(name, kind, model_type, **kwargs)
        if model_class is not None and model_type == requested:
            return _finish(_with_fork_rng(lambda: model_class(config)), name)
        return _finish(_with_fork_rng(lambda: factory.from_config(config)), name)

    try:
        model = build(requested)
    except Exception as exc:  # an architecture that does not size down: fall back, say so
        fallback = _fallback_type(kind)
        NOTICE(f"{name!r}: tiny {requested or 'model'} could not be built ({type(exc).__name__}: {exc}); "
               f"using a tiny {fallback}")
        model = build(fallback)
    model.train(False)
    NOTICE(f"model {str(getattr(name, 'name_or_path', name))!r} -> tiny {model.config.model_type} "
           f"{type(model).__name__}")
    return model


def tiny_tokenizer_for(name: Any, kwargs: dict[str, Any]) -> Any:
    """The in-process BPE tokenizer (pad/eos/bos set, chat template), named after `name`."""
    padding_side = kwargs.get("padding_side", "right")
    tok = TINY.tiny_tokenizer(padding_side=padding_side)
    label = str(getattr(name, "name_or_path", name) or "")
    try:
        tok.name_or_path = label
    except (AttributeError, TypeError):
        pass
    if kwargs.get("truncation_side"):
        tok.truncation_side = kwargs["truncation_side"]
    # Like the real tokenizers of decoder models, no token_type_ids (a model whose forward lacks them would fail);
    # BERT-family names keep them.
    with_types = infer_model_type(name) in ("bert", "deberta-v2", "deberta")
    tok.model_input_names = ["input_ids", "token_type_ids", "attention_mask"] if with_types else [
        "input_ids", "attention_mask"]
    return tok


# ----------------------------------------------------------------------------------------------------------------
# datasets
# ----------------------------------------------------------------------------------------------------------------
SYNTHETIC_MARK = "trl-compat smoke synthetic dataset"
_WORDS = ("the movie was great and the acting was wonderful but the plot felt long and slow in the middle "
          "i would watch it again with friends because the story is fun and the ending is happy").split()
_ROWS = {"train": 256, "test": 64, "validation": 64}


def _sentence(i: int, n_words: int) -> str:
    words = [_WORDS[(i * 7 + k * 3) % len(_WORDS)] for k in range(n_words)]
    return " ".join(words)


# What the script's code reads from its data (compat/smoke/analysis.py, computed by the runner; set by the hook):
# {"columns": {name: "text" | "list" | {field: "text"}}, "markers": [strings the code splits text on]}.
SHAPE: dict[str, Any] = {"columns": {}, "markers": []}


def _marked(text: str, i: int) -> str:
    """`text` with every marker the script splits on, each followed by a few words (`a.split("### Response:")[1]`
    then finds text, as on the real data)."""
    markers = SHAPE.get("markers") or ()
    if not markers:
        return text
    parts = [text]
    for k, marker in enumerate(markers):
        parts += [marker, _sentence(i + k + 1, 4)]
    return " ".join(parts)


def _columns(n: int, wanted: tuple[str, ...]) -> dict[str, list[Any]]:
    cols: dict[str, list[Any]] = {}
    for spec in wanted:
        col, _, form = spec.partition(":")
        if form == "conv":  # conversational column: a list of messages
            role = "user" if col in ("prompt", "messages") else "assistant"
            cols[col] = [[{"role": role, "content": _marked(_sentence(i + len(col), 6), i)}] for i in range(n)]
            continue
        if form == "list":  # the code indexes it: a list of texts
            cols[col] = [[_marked(_sentence(i + k, 4), i) for k in range(3)] for i in range(n)]
            continue
        if form.startswith("struct="):  # the code reads fields of it: a struct of texts
            fields = form[len("struct="):].split(",")
            cols[col] = [{f: _marked(_sentence(i + k, 4), i) for k, f in enumerate(fields)} for i in range(n)]
            continue
        if col in ("prompt", "query", "question", "instruction", "input"):
            cols[col] = [_marked(f"{_sentence(i, 6)}?", i) for i in range(n)]
        elif col in ("completion", "response", "answer", "output", "solution"):
            cols[col] = [_marked(_sentence(i + 1, 5), i) for i in range(n)]
        elif col == "chosen":
            cols[col] = [_marked(_sentence(i + 2, 5), i) for i in range(n)]
        elif col == "rejected":
            cols[col] = [_marked(_sentence(i + 3, 5), i) for i in range(n)]
        elif col in ("text", "review", "sentence", "content"):
            # > 200 characters: survives IMDB-style filters
            cols[col] = [_marked(f"{_sentence(i, 42)}.", i) for i in range(n)]
        elif col in ("label", "labels"):
            cols[col] = [i % 2 for i in range(n)]
        elif col in ("score", "score_chosen", "score_rejected"):
            cols[col] = [float(i % 5) for i in range(n)]
        elif col == "messages":
            cols[col] = [[{"role": "user", "content": _marked(f"{_sentence(i, 6)}?", i)},
                          {"role": "assistant", "content": _sentence(i + 1, 5)}] for i in range(n)]
        elif col == "id":
            cols[col] = [str(i) for i in range(n)]
        else:
            cols[col] = [_marked(_sentence(i, 5), i) for i in range(n)]
    return cols


def _inferred_columns() -> tuple[str, ...]:
    """Column specs (for `_columns`) of what the script reads beyond the generic columns."""
    specs = []
    for name, form in (SHAPE.get("columns") or {}).items():
        if name in GENERIC_COLUMNS and not isinstance(form, dict) and form != "list":
            continue
        if isinstance(form, dict):
            specs.append(f"{name}:struct={','.join(form)}")
        elif form == "list":
            specs.append(f"{name}:list")
        else:
            specs.append(name)
    return tuple(specs)


GENERIC_COLUMNS = ("prompt", "completion", "chosen", "rejected", "label", "messages", "text", "query", "review",
                   "question", "answer", "response", "instruction", "input", "output", "sentence")
GENERIC_SPLITS = ("train", "validation", "test")
# Real schemas (columns, splits) of datasets PPO-era and TRL scripts load, so renames, column checks and split
# lookups behave as on the hub.
KNOWN_SCHEMAS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "imdb": (("text", "label"), ("train", "test", "unsupervised")),
    "stanfordnlp/imdb": (("text", "label"), ("train", "test", "unsupervised")),
    "anthropic/hh-rlhf": (("chosen", "rejected"), ("train", "test")),
    "trl-lib/tldr": (("prompt", "completion"), ("train", "validation", "test")),
    "trl-lib/capybara": (("messages",), ("train", "test")),
    "trl-lib/ultrafeedback-prompt": (("prompt:conv",), ("train", "test")),
    "trl-lib/ultrafeedback_binarized": (("chosen:conv", "rejected:conv", "score_chosen", "score_rejected"),
                                        ("train", "test")),
    "trl-internal-testing/descriptiveness-sentiment-trl-style": (
        ("prompt", "chosen", "rejected"), ("descriptiveness", "sentiment")),
    "trl-internal-testing/tldr-preference-sft-trl-style": (("prompt", "messages", "id"), ("train", "validation", "test")),
    "gsm8k": (("question", "answer"), ("train", "test")),
    "openai/gsm8k": (("question", "answer"), ("train", "test")),
    "trl-lib/deepmath-103k": (("prompt", "solution"), ("train",)),
    "sst2": (("idx", "sentence", "label"), ("train", "validation", "test")),
    "stanfordnlp/sst2": (("idx", "sentence", "label"), ("train", "validation", "test")),
}


def synthetic_dataset(name: str, split: Any = None, streaming: bool = False) -> Any:
    """A small dataset with the columns and splits `name` has on the hub (else every common TRL column and
    train/validation/test). Any split name asked for explicitly exists; slices (`train[:10%]`) give the whole split."""
    import datasets

    key = str(name).lower().strip("/")
    columns, splits = KNOWN_SCHEMAS.get(key, (GENERIC_COLUMNS, GENERIC_SPLITS))
    if key not in KNOWN_SCHEMAS:  # an unknown dataset: also every column the script's code reads
        inferred = _inferred_columns()
        columns = tuple(c for c in columns if c not in {s.partition(":")[0] for s in inferred}) + inferred
    info = datasets.DatasetInfo(description=f"{SYNTHETIC_MARK} for {name}")

    def one(split_name: str) -> Any:
        base = re.split(r"[\[+]", split_name)[0].strip() or "train"
        ds = datasets.Dataset.from_dict(_columns(_ROWS.get(base, 256), columns), info=info, split=base)
        return ds.to_iterable_dataset() if streaming else ds

    NOTICE(f"dataset {name!r} -> synthetic ({', '.join(c.partition(':')[0] for c in columns)})")
    if split is None:
        return (datasets.IterableDatasetDict if streaming else datasets.DatasetDict)({s: one(s) for s in splits})
    if isinstance(split, (list, tuple)):
        return [one(str(s)) for s in split]
    return one(str(split))


def grown(ds: Any, rows: int) -> Any:
    """A synthetic dataset repeated until it has at least `rows` rows (columns, features and info kept): the script
    asked for more rows than the stand-in has, as it may of the real dataset."""
    import datasets

    if rows <= len(ds):
        return ds
    copies = -(-rows // max(len(ds), 1))
    out = datasets.concatenate_datasets([ds] * copies, info=ds.info)
    NOTICE(f"synthetic dataset grown from {len(ds)} to {len(out)} rows (the script asks for row {rows - 1})")
    return out


def is_synthetic(ds: Any) -> bool:
    info = getattr(ds, "info", None)
    return SYNTHETIC_MARK in (getattr(info, "description", None) or "")


# ----------------------------------------------------------------------------------------------------------------
# pipelines
# ----------------------------------------------------------------------------------------------------------------
_TASK_KIND = {
    "sentiment-analysis": "sequence-classification", "text-classification": "sequence-classification",
    "text-generation": "causal-lm", "text2text-generation": "seq2seq-lm", "summarization": "seq2seq-lm",
    "translation": "seq2seq-lm", "feature-extraction": "base",
}


def tiny_pipeline(real_pipeline: Callable[..., Any], task: Any = None, model: Any = None, **kwargs: Any) -> Any:
    """`pipeline(task, model=...)` with tiny weights: a real transformers pipeline, real output format, on CPU. Its
    keywords reach the real pipeline as written (transformers 5 ignores `return_all_scores=`, as it would for the
    user: migrated code answers it through `compat.trl.with_return_all_scores`)."""
    for key in ("device", "device_map", "torch_dtype", "dtype", "revision", "token", "use_auth_token",
                "trust_remote_code", "use_fast"):
        kwargs.pop(key, None)
    model_kwargs = dict(kwargs.pop("model_kwargs", None) or {})
    _drop_quantization(model, model_kwargs)
    tokenizer = kwargs.pop("tokenizer", None)
    task_name = str(task or "text-classification")
    kind = _TASK_KIND.get(task_name, "sequence-classification" if "classification" in task_name else "causal-lm")
    if model is None or isinstance(model, (str, os.PathLike)):
        model = tiny_model_for(model or task_name, kind, dict(model_kwargs))
    if tokenizer is None or isinstance(tokenizer, (str, os.PathLike)):
        tokenizer = tiny_tokenizer_for(tokenizer or getattr(model, "name_or_path", task_name), {})
    pipe = real_pipeline(task, model=model, tokenizer=tokenizer, device="cpu", **kwargs)
    NOTICE(f"pipeline({task_name!r}) -> tiny {type(pipe).__name__}")
    return pipe
