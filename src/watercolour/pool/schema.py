"""The pool's columns, and validation with clear errors.

A pool is a Hugging Face ``datasets`` dataset with one row per painting. The published pool
(``HuggingEnvs/watercolour-reference-pool``) has ``tier``, ``source_file`` and ``image``; ours
adds provenance and measurements. Only ``tier`` and ``image`` are required to *use* a pool;
the rest is filled with nulls when a foreign pool lacks it.
"""

from __future__ import annotations

import hashlib
import io
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from watercolour.errors import InputError

DEFAULT_POOL = "runs/pool"
"""Where ``watercolour pool build`` writes the starter pool, and where the reward looks for a
pool when none is configured."""
TIERS: tuple[str, ...] = ("love", "okay")
"""The two tiers of a pool, best first. ``reject`` is a rating, never a pool tier."""

COLUMNS: dict[str, str] = {
    "id": "string",
    "tier": "string",
    "source_file": "string",
    "image": "image",
    "subject": "string",
    "sketch": "string",
    "painter": "string",
    "round": "int32",
    "critique": "string",
    "seed": "int64",
    "paint_fraction": "float32",
    "n_shapes": "int32",
    "rated_at": "string",
    "rated_by": "string",
    "sha256": "string",
}
"""Column -> type, in order. ``rated_by`` says who assigned the tier: ``person`` or
``synthetic:<rule>`` (a starter pool's documented rule, not anyone's taste)."""

REQUIRED: tuple[str, ...] = ("tier", "image")

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def features():
    """The ``datasets.Features`` of a pool."""
    from datasets import Features, Image, Value

    return Features({name: Image() if kind == "image" else Value(kind)
                     for name, kind in COLUMNS.items()})


class PoolValidationError(InputError):
    """A pool is not usable; ``problems`` lists every reason (the message shows the first)."""

    def __init__(self, problems: list[str], source: str = "pool") -> None:
        self.problems = problems
        shown = "; ".join(problems[:5])
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        super().__init__(f"{source} is not a valid pool: {shown}{more}")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def png_problem(data: bytes | None) -> str | None:
    """Why ``data`` is not a decodable PNG, or None when it is one."""
    if not data:
        return "no image bytes"
    if not data.startswith(PNG_SIGNATURE):
        return "not a PNG (bad signature)"
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as image:
            image.load()
            if image.width < 1 or image.height < 1:
                return "an empty image"
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as err:
        return f"not decodable ({type(err).__name__}: {err})"
    return None


def image_bytes(value: Any) -> bytes | None:
    """The encoded bytes of an ``image`` cell, whatever form ``datasets`` gave it in:
    ``{"bytes", "path"}`` (undecoded), a PIL image (decoded, re-encoded as PNG), raw bytes,
    or a path."""
    if value is None:
        return None
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    if isinstance(value, Mapping):
        if value.get("bytes"):
            return bytes(value["bytes"])
        if value.get("path"):
            return _read(value["path"])
        return None
    if isinstance(value, str):
        return _read(value)
    if hasattr(value, "save"):  # a PIL image
        buffer = io.BytesIO()
        value.save(buffer, format="PNG")
        return buffer.getvalue()
    return None


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def validate_rows(
    rows: Iterable[Mapping[str, Any]],
    source: str = "pool",
    require_tiers: Iterable[str] = TIERS,
) -> list[str]:
    """Check rows (dicts with at least ``tier`` and ``image``); return their sha256 hashes.

    Raises :class:`PoolValidationError` listing every problem: a missing column, an unknown
    tier, an image that is not a decodable PNG, a tier with no rows, two rows with the same
    image (same sha256), or a ``sha256`` column that does not match its image.
    """
    problems: list[str] = []
    hashes: list[str] = []
    seen: dict[str, str] = {}
    tiers: Counter[str] = Counter()
    n = 0
    for i, row in enumerate(rows):
        n += 1
        name = str(row.get("id") or f"row {i}")
        missing = [c for c in REQUIRED if c not in row]
        if missing:
            problems.append(f"{name}: missing column(s) {', '.join(missing)}")
            continue
        tier = row["tier"]
        if tier not in TIERS:
            problems.append(f"{name}: unknown tier {tier!r} (expected one of {', '.join(TIERS)})")
        else:
            tiers[tier] += 1
        data = image_bytes(row["image"])
        problem = png_problem(data)
        if problem:
            problems.append(f"{name}: image is {problem}")
            hashes.append("")
            continue
        digest = sha256(data)  # type: ignore[arg-type]
        hashes.append(digest)
        stated = row.get("sha256")
        if stated and stated != digest:
            problems.append(f"{name}: sha256 column {stated[:12]}… does not match the image "
                            f"({digest[:12]}…)")
        if digest in seen:
            problems.append(f"{name}: duplicate image (same sha256 as {seen[digest]})")
        else:
            seen[digest] = name
    if n == 0:
        problems.append("no rows")
    else:
        for tier in require_tiers:
            if tiers[tier] == 0:
                problems.append(f"tier {tier!r} is empty")
    if problems:
        raise PoolValidationError(problems, source)
    return hashes


def validate(dataset, source: str = "pool", require_tiers: Iterable[str] = TIERS) -> None:
    """Validate a ``datasets.Dataset`` (see :func:`validate_rows`). Images are read without
    decoding them into arrays."""
    from datasets import Image

    missing = [c for c in REQUIRED if c not in dataset.column_names]
    if missing:
        raise PoolValidationError([f"missing column(s) {', '.join(missing)}"], source)
    raw = dataset.cast_column("image", Image(decode=False))
    validate_rows(raw, source=source, require_tiers=require_tiers)


def normalise_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row with every pool column (absent ones as None), ours first, extras kept after."""
    out = {name: row.get(name) for name in COLUMNS}
    out.update({k: v for k, v in row.items() if k not in COLUMNS})
    return out
