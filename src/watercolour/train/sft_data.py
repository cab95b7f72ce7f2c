"""The supervised warm start's examples: a rated pool's sketches as TRL *prompt-completion
conversational* rows (:mod:`watercolour.train.sft` trains on them).

Each kept pool row becomes::

    {"prompt": <the messages GRPO training sends for the row's subject>,
     "completion": [{"role": "assistant", "content": "```javascript\\n<sketch>```"}]}

The prompt is :func:`watercolour.train.trainer.prompt_messages` (``--prompt full``: the system
prompt and the request; ``short``: the request alone), the completion the reply the policy is
asked to write, in the fenced form :func:`watercolour.gates.extract.extract_sketch` takes back
(the tiny painter's ``reply()``). :func:`strip_comments` and a token limit can shorten the
targets for a small model.

:func:`compact_examples` is the other source: generated sketches in the tiny painter's compact
helper style (:mod:`watercolour.models.tiny.sketches`, ~750 tokens in SmolLM2's tokenizer
against the pool's median ~2,600), for the pool's subjects and palettes, good ones and flawed
ones, as many as wanted.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from watercolour.errors import InputError
from watercolour.pool.schema import TIERS
from watercolour.prompt import DEFAULT_SUBJECT


def reply(code: str) -> str:
    """The assistant's answer for ``code``: the sketch in one fenced JavaScript block (the form
    the gates extract; the tiny painter's ``reply()``)."""
    return f"```javascript\n{code if code.endswith(chr(10)) else code + chr(10)}```"


def strip_comments(code: str) -> str:
    """``code`` without its ``//`` comments (found by the JavaScript parser, so a ``//`` inside
    a string, a template or a regex stays), trailing blanks, and runs of blank lines (one is
    kept). Block comments (``/* */``) stay. Code that does not parse cleanly is returned
    unchanged (its comments cannot be told apart safely)."""
    from watercolour.javascript import parse

    data = code.encode("utf-8")
    tree = parse(code)
    if tree.root_node.has_error:
        return code
    spans: list[tuple[int, int]] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "comment" and data[node.start_byte:node.end_byte].startswith(b"//"):
            spans.append((node.start_byte, node.end_byte))
        stack.extend(node.children)
    for start, end in sorted(spans, reverse=True):
        data = data[:start] + data[end:]
    lines: list[str] = []
    commented = {i for i, line in enumerate(code.splitlines()) if line.strip().startswith("//")}
    for i, line in enumerate(data.decode("utf-8").splitlines()):
        line = line.rstrip()
        if not line and i in commented:
            continue  # a whole-line comment: the line goes
        if not line and (not lines or not lines[-1]):
            continue  # a run of blank lines (or a leading one): one is kept
        lines.append(line)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n"


def parse_tiers(text: str | Sequence[str]) -> tuple[str, ...]:
    """``love,okay`` -> ``("love", "okay")``; an unknown or missing tier is an InputError."""
    items = text.split(",") if isinstance(text, str) else [str(t) for t in text]
    tiers = tuple(dict.fromkeys(t.strip() for t in items if t.strip()))
    if not tiers:
        raise InputError(f"--tiers needs at least one of {', '.join(TIERS)}")
    unknown = [t for t in tiers if t not in TIERS]
    if unknown:
        raise InputError(f"--tiers: unknown tier {unknown[0]!r} (the pool's tiers: "
                         f"{', '.join(TIERS)})")
    return tiers


@dataclass
class Examples:
    """The training rows and what became of the pool's rows."""

    rows: list[dict[str, Any]]
    """Prompt-completion conversational rows (``prompt``, ``completion``)."""
    ids: list[str]
    """The pool ids of ``rows``, in order."""
    pool_rows: int
    """Rows in the pool."""
    counts: dict[str, int] = field(default_factory=dict)
    """``selected`` (tier and subject filter), ``too_long`` (over ``max_sketch_tokens``),
    ``kept``."""
    completion_tokens: list[int] = field(default_factory=list)
    """Tokens of each kept completion's text (when a tokenizer was given)."""

    def dataset(self) -> Any:
        from datasets import Dataset

        return Dataset.from_list(self.rows)


COMPACT_TIER = {"good": "love"}
"""A compact sketch's tier: a good variant is ``love``, a flawed one (flat, muddy, sparse,
dark, off centre) ``okay``: the pool's synthetic tiers follow the same split."""


def compact_tier(variant: str) -> str:
    return COMPACT_TIER.get(variant, "okay")


def compact_examples(count: int, *, tiers: Sequence[str] = TIERS, prompt: str = "full",
                     subjects: Sequence[str] = (), start: int = 0, max_seeds: int = 100_000,
                     count_tokens: Callable[[str], int] | None = None) -> Examples:
    """``count`` generated compact sketches of ``tiers`` (and ``subjects``, phrases such as
    ``"a peach hibiscus"``, when given) as training rows, from seed ``start`` on; the ids are
    ``compact-SEED``; ``count_tokens`` counts each reply. Too few matching sketches within
    ``max_seeds`` seeds is an InputError."""
    from watercolour.models.tiny.sketches import compact_sketch
    from watercolour.train.trainer import prompt_messages

    if count < 1:
        raise InputError(f"--compact-examples must be at least 1, got {count}")
    tiers = parse_tiers(tiers)
    wanted = set(subjects)
    examples = Examples([], [], 0, {"selected": 0, "too_long": 0})
    for seed in range(start, start + max_seeds):
        if len(examples.rows) == count:
            break
        sketch = compact_sketch(seed)
        if compact_tier(sketch.variant) not in tiers or (wanted and sketch.subject not in wanted):
            continue
        request = SimpleNamespace(prompt=prompt, subject=sketch.subject)
        examples.rows.append({"prompt": prompt_messages(request),  # type: ignore[arg-type]
                              "completion": [{"role": "assistant", "content": sketch.reply()}]})
        examples.ids.append(f"compact-{seed}")
        if count_tokens is not None:
            examples.completion_tokens.append(count_tokens(sketch.reply()))
    if len(examples.rows) < count:
        raise InputError(f"only {len(examples.rows)} compact sketches of tiers "
                         f"{','.join(tiers)} and subjects {sorted(wanted)} in {max_seeds} seeds")
    examples.counts.update(selected=count, kept=count)
    return examples


def load_rows(pool: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The pool's rows (id, tier, subject, sketch) from a folder, build folder or Hub id; a
    missing pool is one InputError."""
    from watercolour.pool.dataset import load_pool

    try:
        dataset = load_pool(pool, check=False)
    except FileNotFoundError as err:
        raise InputError(f"--pool: {err}") from None
    columns = [c for c in ("id", "tier", "subject", "sketch") if c in dataset.column_names]
    if "sketch" not in columns or "tier" not in columns:
        raise InputError(f"--pool {pool}: the pool has no sketch or tier column")
    return dataset.select_columns(columns).to_list()


def build_examples(pool: str | os.PathLike[str], *, tiers: Sequence[str] = TIERS,
                   prompt: str = "full", subjects: Sequence[str] = (),
                   strip: bool = False, max_sketch_tokens: int | None = None,
                   count_tokens: Callable[[str], int] | None = None) -> Examples:
    """The pool's sketches of ``tiers`` (and ``subjects``, when given) as training rows.
    ``strip``: :func:`strip_comments` first; ``max_sketch_tokens`` drops a completion longer
    than that in ``count_tokens`` (needed then). No row left is an InputError."""
    from watercolour.train.trainer import prompt_messages

    tiers = parse_tiers(tiers)
    if max_sketch_tokens is not None and count_tokens is None:
        raise ValueError("max_sketch_tokens needs count_tokens")
    pool_rows = load_rows(pool)
    wanted = set(subjects)
    selected = [r for r in pool_rows if r["tier"] in tiers and (r.get("sketch") or "").strip()
                and (not wanted or r.get("subject") in wanted)]
    if not selected:
        what = f"tiers {','.join(tiers)}" + (f" and subjects {sorted(wanted)}" if wanted else "")
        raise InputError(f"--pool {pool}: no sketch of {what} among its {len(pool_rows)} rows")
    examples = Examples([], [], len(pool_rows), {"selected": len(selected), "too_long": 0})
    for row in selected:
        code = strip_comments(row["sketch"]) if strip else row["sketch"]
        content = reply(code)
        tokens = count_tokens(content) if count_tokens is not None else None
        if max_sketch_tokens is not None and tokens is not None and tokens > max_sketch_tokens:
            examples.counts["too_long"] += 1
            continue
        request = SimpleNamespace(prompt=prompt, subject=row.get("subject") or DEFAULT_SUBJECT)
        examples.rows.append({"prompt": prompt_messages(request),  # type: ignore[arg-type]
                              "completion": [{"role": "assistant", "content": content}]})
        examples.ids.append(str(row.get("id", len(examples.ids))))
        if tokens is not None:
            examples.completion_tokens.append(tokens)
    examples.counts["kept"] = len(examples.rows)
    if not examples.rows:
        raise InputError(f"--max-sketch-tokens {max_sketch_tokens}: all {len(selected)} "
                         "selected sketches are longer; raise it (or --strip-comments)")
    return examples
