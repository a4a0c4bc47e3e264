"""Tiny stand-ins built in-process: a tokenizer trained with `tokenizers` and random-weight transformers models.

Used by the smoke runner (`compat.smoke`) and by the tests, so nothing ever downloads a model. Importing this module
imports torch and transformers: it is never imported by `import compat`.
"""

from __future__ import annotations

import functools
from typing import Any

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|' + message['role'] + '|>' + message['content'] + '<|end|>' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>' }}{% endif %}"
)
SPECIAL_TOKENS = ["<pad>", "<eos>", "<bos>", "<unk>", "<|user|>", "<|assistant|>", "<|system|>", "<|end|>"]

_WORDS = (
    "the a an movie film was is great good bad terrible awful wonderful boring fun plot actor acting story "
    "i you we they it this that not very really so and but or of to in on with for as at by from "
    "what why how when where who which answer question solve math number one two three four five six seven "
    "eight nine ten plus minus equals yes no maybe positive negative happy sad love hate like best worst "
    "write poem about cat dog sun moon tree river city people time day night summer winter quick brown fox"
).split()


def _corpus() -> list[str]:
    lines = []
    for i in range(len(_WORDS)):
        lines.append(" ".join(_WORDS[i:] + _WORDS[:i]))
    lines += [" ".join(str(n) for n in range(k, k + 20)) for k in range(0, 200, 20)]
    lines.append("abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 .,;:!?'\"()[]{}<>-_+=*/\\|@#$%^&~`")
    return lines


@functools.lru_cache(maxsize=4)
def _tokenizer_json(vocab_size: int) -> str:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_corpus(), trainer=trainer)
    return tok.to_str()


def tiny_tokenizer(vocab_size: int = 512, padding_side: str = "left") -> Any:
    """A byte-level BPE tokenizer trained in-process, with pad/eos/bos set and a chat template."""
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    tok = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer.from_str(_tokenizer_json(vocab_size)),
        pad_token="<pad>",
        eos_token="<eos>",
        bos_token="<bos>",
        unk_token="<unk>",
        padding_side=padding_side,
    )
    tok.chat_template = CHAT_TEMPLATE
    tok.model_max_length = 512
    return tok


# Sized-down configs per architecture that transformers knows offline.
_TINY_DIMS = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4)


def tiny_config(model_type: str = "llama", vocab_size: int = 512, **overrides: Any) -> Any:
    """A tiny config of `model_type` (llama, qwen2, qwen3, mistral, gemma, gpt2, ...); unknown types give llama."""
    from transformers import AutoConfig, CONFIG_MAPPING

    if model_type not in CONFIG_MAPPING:
        model_type = "llama"
    if model_type == "gpt2":
        kwargs: dict[str, Any] = dict(n_embd=32, n_layer=2, n_head=4, n_positions=512)
    elif model_type in ("t5", "mt5"):
        kwargs = dict(d_model=32, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=4, d_kv=8,
                      decoder_start_token_id=0)
    elif model_type in ("bart", "mbart", "pegasus", "marian"):
        kwargs = dict(d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                      decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=512)
    else:
        kwargs = dict(_TINY_DIMS, num_key_value_heads=2, max_position_embeddings=512, head_dim=8)
    kwargs.update(vocab_size=vocab_size, pad_token_id=0, eos_token_id=1, bos_token_id=2)
    kwargs.update(overrides)
    return AutoConfig.for_model(model_type, **kwargs)


def tiny_model(kind: str = "causal-lm", model_type: str = "llama", vocab_size: int = 512, seed: int = 0,
               **overrides: Any) -> Any:
    """A random-weight model: kind is causal-lm, seq2seq-lm or sequence-classification (num_labels in overrides)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoModelForSequenceClassification

    if kind == "seq2seq-lm" and model_type not in ("t5", "mt5", "bart", "mbart", "pegasus", "marian"):
        model_type = "t5"
    config = tiny_config(model_type, vocab_size=vocab_size, **overrides)
    factory = {
        "causal-lm": AutoModelForCausalLM,
        "seq2seq-lm": AutoModelForSeq2SeqLM,
        "sequence-classification": AutoModelForSequenceClassification,
    }[kind]
    torch.manual_seed(seed)
    return factory.from_config(config)
