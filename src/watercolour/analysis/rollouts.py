"""A run's rollouts: read them (JSONL, or a ``datasets`` folder) without their pictures.

One row per rollout, as the trainer writes them: ``step``, ``group``, ``index``, ``seed``,
``prompt``, ``completion``, ``sketch``, ``png``, ``reward`` (``None`` when unavailable),
``components`` (term -> value), ``status`` (``ok`` | ``rejected`` | ``unavailable``),
``violations``, ``paint_fraction``, ``n_shapes``, ``references`` (the reference ids drawn).
"""

from __future__ import annotations

import base64
import binascii
import os
from pathlib import Path
from typing import Any

import pandas as pd

from watercolour import jsonl
from watercolour.errors import InputError

COLUMNS = ("step", "group", "index", "seed", "prompt", "completion", "sketch", "png", "reward",
           "components", "status", "violations", "paint_fraction", "n_shapes", "references")
"""The columns of a rollouts dataset."""

REQUIRED = ("step", "reward")
"""The columns the analysis cannot do without."""

HEAVY = ("png", "completion", "prompt")
"""Columns left out when reading for analysis (pictures and long text)."""


def read_rollouts(path: str | os.PathLike[str], pictures: bool = False) -> pd.DataFrame:
    """Read a rollouts dataset: a ``.jsonl`` file (one rollout per line), a folder saved with
    ``datasets``' ``save_to_disk``, or a folder of ``.parquet`` / ``rollouts.jsonl`` files.

    ``pictures=False`` leaves out the PNG bytes and long text columns. ``reward`` becomes a float
    column with NaN for unavailable rollouts. Raises ``FileNotFoundError`` or ``ValueError``
    (with the path) for a missing or malformed dataset."""
    source = Path(path)
    if not source.exists():
        raise FileNotFoundError(f"rollouts not found: {source}")
    frame = _read_any(source, pictures)
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        raise InputError(f"{source}: rollouts have no {', '.join(missing)} column")
    if frame.empty:
        raise InputError(f"{source}: no rollouts")
    frame["reward"] = pd.to_numeric(frame["reward"], errors="coerce")
    for name in ("paint_fraction", "n_shapes", "step", "group", "index"):
        if name in frame.columns:
            frame[name] = pd.to_numeric(frame[name], errors="coerce")
    return frame.sort_values(["step", *(["index"] if "index" in frame else [])],
                             kind="stable").reset_index(drop=True)


def _read_any(source: Path, pictures: bool) -> pd.DataFrame:
    if source.is_file():
        if source.suffix == ".parquet":
            return _drop_heavy(pd.read_parquet(source), pictures)
        return _read_jsonl(source, pictures)
    if (source / "state.json").is_file() or (source / "dataset_info.json").is_file():
        import datasets

        dataset = datasets.load_from_disk(str(source))
        if isinstance(dataset, datasets.DatasetDict):
            dataset = datasets.concatenate_datasets(list(dataset.values()))
        if not pictures:
            dataset = dataset.remove_columns([c for c in HEAVY if c in dataset.column_names])
        return dataset.to_pandas()
    parquet = sorted(source.rglob("*.parquet"))
    if parquet:
        return pd.concat([_drop_heavy(pd.read_parquet(p), pictures) for p in parquet],
                         ignore_index=True)
    jsonl = sorted(source.glob("*.jsonl"))
    if jsonl:
        return pd.concat([_read_jsonl(p, pictures) for p in jsonl], ignore_index=True)
    raise InputError(f"{source}: no rollouts here (expected a datasets folder, .parquet or "
                     ".jsonl files)")


def _read_jsonl(source: Path, pictures: bool) -> pd.DataFrame:
    """A crash-safe rollout log (:mod:`watercolour.jsonl`): a torn last line is dropped."""
    rows = []
    for number, row in enumerate(jsonl.iter_records(source), 1):
        if not isinstance(row, dict):
            raise InputError(f"{source}: record {number}: a rollout must be a JSON object")
        if not pictures:
            for name in HEAVY:
                row.pop(name, None)
        rows.append(row)
    return pd.DataFrame(rows)


def _drop_heavy(frame: pd.DataFrame, pictures: bool) -> pd.DataFrame:
    return frame if pictures else frame.drop(columns=[c for c in HEAVY if c in frame.columns])


def rollout_png(value: Any, source: str | os.PathLike[str]) -> bytes | None:
    """The PNG of a rollout, stored as bytes, a ``datasets`` Image dict, a path (relative to the
    dataset), base64 or hex text; ``None`` when there is none."""
    if isinstance(value, dict):
        value = value.get("bytes") or value.get("path")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value) or None
    if not isinstance(value, str) or not value:
        return None
    source = Path(source)
    base = source if source.is_dir() else source.parent
    try:
        if len(value) < 1024 and (base / value).is_file():
            return (base / value).read_bytes()
    except OSError:
        pass  # not a path
    for decode in (base64.b64decode, bytes.fromhex):
        try:
            data = decode(value)
        except (ValueError, binascii.Error):
            continue
        if data.startswith(b"\x89PNG"):
            return data
    return None


def reward_breakdown(row: Any) -> list[dict[str, Any]]:
    """A rollout's reward, term by term: ``{"term", "raw", "weight", "contribution"}`` each,
    from its ``breakdown`` (the reward's record, :class:`~watercolour.rewards.RewardRecord`,
    as JSON text or a dict) when it has one, else from ``components`` (raw values only; weight
    and contribution ``None``)."""
    from pydantic import ValidationError

    from watercolour.rewards.record import RewardRecord

    get = row.get if hasattr(row, "get") else (lambda _k, _d=None: None)
    data = get("breakdown", None)
    record = None
    try:
        if isinstance(data, str) and data:
            record = RewardRecord.model_validate_json(data)
        elif isinstance(data, dict):
            record = RewardRecord.from_dict(data)
    except ValidationError:
        record = None
    if record is not None and record.components:
        return [{"term": name, "raw": part.raw, "weight": part.weight,
                 "contribution": part.contribution}
                for name, part in record.components.items()]
    components = get("components", None)
    if isinstance(components, dict):
        return [{"term": str(k), "raw": v, "weight": None, "contribution": None}
                for k, v in components.items()]
    return []
