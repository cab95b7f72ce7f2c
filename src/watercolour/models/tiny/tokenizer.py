"""The tiny painter's tokenizer: byte-level BPE trained here on compact sketches, with a
pre-split that keeps each number and each ``'#rrggbb'`` colour string whole.

The pre-split matters more than the vocabulary (``../shared/reference/tiny-painter.md``): with
GPT-2's split a sketch is ~900 tokens and a colour is several pieces the model recombines into
invalid hex (p5 then paints nothing); with these splits a palette colour is one token.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

SPECIAL: tuple[str, ...] = ("<|pad|>", "<|im_start|>", "<|im_end|>")
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
"""Qwen's ChatML layout, without a system turn of its own."""

PRE_SPLIT = r"'#[0-9a-fA-F]{6}'| ?-?[0-9]+(?:\.[0-9]+)?|[^0-9'\n]+\n?|'|\n"
"""Pieces: a quoted colour, a number (sign, digits, decimals), or the code between numbers up
to the end of its line. BPE merges within a piece only, so the helpers' fixed lines become
single tokens while every number and colour stays its own choice. Measured on 500 compact
sketches (vocabulary 2,048): digit runs split 626 tokens a sketch (median), whole numbers 478,
these pieces 224."""


def build_tokenizer(texts: Iterable[str], vocab_size: int = 2048) -> Any:
    """A ``PreTrainedTokenizerFast`` trained on ``texts`` with the chat template."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(PRE_SPLIT), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(SPECIAL),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token=SPECIAL[0],
                                   bos_token=SPECIAL[1], eos_token=SPECIAL[2])
    fast.chat_template = CHAT_TEMPLATE
    return fast
