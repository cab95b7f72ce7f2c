"""``builtin:tiny-qwen3``: a tiny random Qwen3 built from a config here (no download), with a
small byte-level BPE tokenizer trained on the system prompt and the example sketches, and a
Qwen-style chat template.

A placeholder for plumbing and tests: the real embedded painter (a warm-started tiny model
that writes sketches) is the tiny-painter issue's. :func:`imprint` trains the random model for
a few seconds on one reply, so its samples are short sketches that render (or near misses the
gate rejects): enough for a run's artifacts to hold real paintings.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

VOCAB = 512
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
SPECIAL = ["<|pad|>", "<|im_start|>", "<|im_end|>"]


def tiny_config(vocab_size: int = VOCAB, hidden: int = 64, layers: int = 2) -> Any:
    """The tiny Qwen3's architecture (about 0.1M parameters besides the embeddings)."""
    from transformers import Qwen3Config

    return Qwen3Config(vocab_size=vocab_size, hidden_size=hidden, intermediate_size=2 * hidden,
                       num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2,
                       head_dim=hidden // 4, max_position_embeddings=4096,
                       tie_word_embeddings=True, pad_token_id=0, bos_token_id=1, eos_token_id=2)


def architecture(name: str = "") -> Any:
    """The registry's config of ``builtin:tiny-qwen3`` (:func:`tiny_config`'s default)."""
    return tiny_config()


def _corpus(extra: list[str]) -> list[str]:
    from watercolour.examples import load_examples
    from watercolour.prompt import messages

    texts = [m["content"] for m in messages()]
    return texts + list(load_examples().values()) + extra


def build_tokenizer(extra_texts: list[str] | None = None) -> Any:
    """A byte-level BPE tokenizer (vocabulary 512) with the chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=SPECIAL,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(_corpus(extra_texts or []), trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<|pad|>",
                                   bos_token="<|im_start|>", eos_token="<|im_end|>")
    fast.chat_template = CHAT_TEMPLATE
    return fast


def build_tiny_qwen3(folder: str | os.PathLike[str], seed: int = 0,
                     imprint_reply: str | None = None, imprint_steps: int = 150,
                     prompt: list[dict[str, str]] | None = None) -> Path:
    """Write a tiny random Qwen3 + tokenizer to ``folder`` (kept when already there)."""
    import torch
    from transformers import Qwen3ForCausalLM

    target = Path(folder)
    if (target / "config.json").is_file() and (target / "tokenizer.json").is_file():
        return target
    tokenizer = build_tokenizer([imprint_reply] if imprint_reply else None)
    torch.manual_seed(seed)
    model = Qwen3ForCausalLM(tiny_config())
    if imprint_reply:
        imprint(model, tokenizer, imprint_reply, steps=imprint_steps, prompt=prompt)
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    return target


def build(name: str, folder: str | os.PathLike[str], seed: int = 0) -> Path:
    """The registry's builder of ``builtin:tiny-qwen3``: :func:`build_tiny_qwen3` into
    ``folder`` (a run's, not cached) from the run's ``seed``."""
    return build_tiny_qwen3(folder, seed=seed)


def imprint(model: Any, tokenizer: Any, reply: str, steps: int = 150, lr: float = 5e-3,
            prompt: list[dict[str, str]] | None = None) -> float:
    """Train ``model`` (in place) to answer ``prompt`` (default: the full painting request)
    with ``reply``; returns the last loss. Loss on the reply's tokens only."""
    import torch

    from watercolour.prompt import messages

    prompt = tokenizer.apply_chat_template(prompt or messages(), tokenize=False,
                                           add_generation_prompt=True)
    prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    reply_ids = tokenizer(reply + "<|im_end|>", add_special_tokens=False)["input_ids"]
    ids = torch.tensor([prompt_ids + reply_ids])
    labels = ids.clone()
    labels[0, :len(prompt_ids)] = -100
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    loss = torch.tensor(0.0)
    for _ in range(steps):
        loss = model(input_ids=ids, labels=labels).loss
        loss.backward()
        optimiser.step()
        optimiser.zero_grad()
    model.eval()
    return float(loss.detach())
