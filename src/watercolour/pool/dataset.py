"""Pools on disk and on the Hub: write, load, save, push.

Three forms load the same way through :func:`load_pool`:

- a **pool folder**, laid out like the published pool (an ``imagefolder`` with metadata):
  ``metadata.jsonl`` (one row per painting, ``file_name`` = ``images/<id>.png``,
  ``source_file`` = ``sources/<id>.js``), ``images/``, ``sources/``, ``README.md``;
- the output of ``Dataset.save_to_disk`` (:func:`save_pool`);
- a **Hub dataset id** (``HuggingEnvs/watercolour-reference-pool``): its files are fetched
  with ``huggingface_hub.snapshot_download`` (from the local cache when offline) and the
  snapshot is loaded as a folder, in either layout the Hub holds (pool folder, or the Parquet
  files ``push_to_hub`` writes).

A build folder (``watercolour pool build --out DIR``) loads as its ``pool/`` subfolder.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from statistics import mean, median
from typing import Any

from watercolour.errors import InputError
from watercolour.pool.schema import (
    COLUMNS,
    TIERS,
    PoolValidationError,
    features,
    image_bytes,
    normalise_row,
    sha256,
    validate,
)

METADATA = "metadata.jsonl"


# ---------------------------------------------------------------- writing


def write_pool_folder(
    rows: Iterable[Mapping[str, Any]],
    folder: str | os.PathLike[str],
    card: str | None = None,
) -> Path:
    """Write rows as a pool folder and return its path.

    Each row needs ``id``, ``tier`` and ``png`` (the image bytes) or ``image``; ``sketch`` is
    written to ``sources/<id>.js``. The folder is written beside its target and renamed into
    place, so a crash leaves either the old pool or the new one.
    """
    target = Path(folder)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}."))
    try:
        (tmp / "images").mkdir()
        (tmp / "sources").mkdir()
        lines = []
        for row in rows:
            row = dict(row)
            rid = str(row["id"])
            data = row.pop("png", None) or image_bytes(row.pop("image", None))
            if data is None:
                raise InputError(f"row {rid} has no image")
            image_name = f"images/{rid}.png"
            (tmp / image_name).write_bytes(data)
            meta = {k: v for k, v in normalise_row(row).items() if k != "image"}
            meta["sha256"] = meta.get("sha256") or sha256(data)
            if meta.get("sketch"):
                meta["source_file"] = f"sources/{rid}.js"
                (tmp / meta["source_file"]).write_text(meta["sketch"], encoding="utf-8")
            lines.append(json.dumps({"file_name": image_name, **meta}, ensure_ascii=False))
        with open(tmp / METADATA, "w", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + ("\n" if lines else ""))
            handle.flush()
            os.fsync(handle.fileno())
        (tmp / "README.md").write_text(card or default_card(len(lines)), encoding="utf-8")
        if target.exists():
            old = target.with_name(f".{target.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(target, old)
            os.replace(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def default_card(rows: int, note: str = "") -> str:
    """A dataset card (README.md with YAML front matter) for a pool folder."""
    return (
        "---\n"
        "license: cc-by-4.0\n"
        "task_categories:\n- image-classification\n"
        "tags:\n- reinforcement-learning\n- reward-model\n- p5js\n- generative-art\n"
        # The images and their metadata together: `load_dataset(folder)` (and the Hub's
        # viewer) then reads an imagefolder, an `image` column beside the metadata's columns.
        # Naming only metadata.jsonl would read it as JSON, file names instead of images.
        "configs:\n- config_name: default\n  data_files:\n  - split: train\n    path:\n"
        f"    - \"{METADATA}\"\n    - \"images/*.png\"\n"
        "---\n\n"
        "# A watercolour reference pool\n\n"
        f"{rows} paintings in two tiers, `love` and `okay`: p5.brush sketches (`sources/`) "
        "and their renders (`images/`), one row each in `metadata.jsonl`. The pairwise judge "
        "of the `watercolour` environment compares candidates against paintings drawn from it."
        " `datasets.load_dataset(<this repository or folder>, split=\"train\")` reads it with "
        "an `image` column beside `tier`, `subject`, `sketch` and `critique`.\n\n"
        + (note + "\n" if note else "")
    )


def save_pool(dataset, path: str | os.PathLike[str]) -> Path:
    """``Dataset.save_to_disk``; loads back with :func:`load_pool`."""
    dataset.save_to_disk(str(path))
    return Path(path)


def upload_files(folder: str | os.PathLike[str]) -> list[Path]:
    """The files :func:`push_pool` uploads from a pool folder, relative to it, sorted: the
    card, ``metadata.jsonl``, ``images/`` and ``sources/`` (hidden files and anything else are
    left out)."""
    root = resolve_local(Path(folder))
    if not (root / METADATA).is_file():
        raise InputError(f"{root} is not a pool folder (no {METADATA})")
    return sorted(path.relative_to(root) for path in root.rglob("*")
                  if path.is_file() and _uploadable(path.relative_to(root)))


UPLOAD_PATTERNS = ["README.md", METADATA, "images/*.png", "sources/*.js"]
"""What a pool folder's upload holds (``upload_folder``'s ``allow_patterns``)."""


def _uploadable(relative: Path) -> bool:
    parts = relative.parts
    if any(part.startswith(".") for part in parts):
        return False
    if len(parts) == 1:
        return parts[0] in ("README.md", METADATA)
    return len(parts) == 2 and ((parts[0], relative.suffix) in (("images", ".png"),
                                                                ("sources", ".js")))


def push_pool(
    source,
    repo_id: str,
    *,
    token: str | None = None,
    private: bool = False,
    commit_message: str = "Upload a watercolour pool",
    endpoint: str | None = None,
    check: bool = True,
) -> str:
    """Push a pool to the Hub as a dataset repository and return its URL.

    ``source`` is a pool folder (a build folder's ``pool/`` too), uploaded as it is, sources
    and card included (:func:`upload_files`: the layout of the published pool, which
    ``datasets.load_dataset`` reads as an imagefolder), or a ``datasets.Dataset`` (pushed as
    Parquet with ``push_to_hub``). A folder is validated first (``check``). ``endpoint``: a
    Hub other than ``HF_ENDPOINT``'s.
    """
    from huggingface_hub import HfApi

    folder = None
    if isinstance(source, str | os.PathLike):
        folder = resolve_local(Path(source))
        upload_files(folder)  # a pool folder, or a clear error
        if check:
            validate(_from_metadata(folder), source=str(folder))
    api = HfApi(token=token, endpoint=endpoint)
    url = api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    if folder is not None:
        api.upload_folder(folder_path=str(folder), repo_id=repo_id, repo_type="dataset",
                          commit_message=commit_message, allow_patterns=UPLOAD_PATTERNS,
                          ignore_patterns=[".*", "*/.*"])
    else:
        source.push_to_hub(repo_id, token=token, private=private,
                           commit_message=commit_message)
    return str(url)


# ---------------------------------------------------------------- loading


def resolve_local(path: Path) -> Path:
    """A build folder's ``pool/``, or the folder itself."""
    if (path / "pool").is_dir() and not (path / METADATA).exists():
        return path / "pool"
    return path


def is_hub_id(text: str) -> bool:
    parts = str(text).split("/")
    return len(parts) == 2 and all(parts) and not str(text).startswith((".", "/", "~"))


def load_pool(
    source: str | os.PathLike[str],
    *,
    revision: str | None = None,
    split: str = "train",
    check: bool = True,
    token: str | None = None,
):
    """Load a pool as a ``datasets.Dataset`` with every pool column.

    Args:
        source: a pool folder, a build folder, a ``save_to_disk`` folder, a folder of Parquet
            files, or a Hub dataset id.
        revision: a Hub revision (branch, tag, commit) when ``source`` is a Hub id.
        split: which split to take from a dataset with several.
        check: validate (tiers, decodable PNGs, no empty tier, no duplicate image).
        token: a Hub token for private datasets.

    Raises:
        FileNotFoundError: ``source`` is neither an existing folder nor a Hub id.
        PoolValidationError: ``check`` and the pool is not valid.
    """
    path = Path(source).expanduser()
    if path.exists():
        name = str(path)
        dataset = _load_local(resolve_local(path), split)
    elif is_hub_id(str(source)):
        name = str(source)
        folder = _snapshot(str(source), revision, token)
        dataset = _load_local(folder, split)
    else:
        raise FileNotFoundError(f"no pool folder {source} (and it is not a Hub dataset id "
                                "of the form owner/name)")
    if check:
        validate(dataset, source=name)
    return dataset


def _snapshot(repo_id: str, revision: str | None, token: str | None) -> Path:
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(repo_id, repo_type="dataset", revision=revision,
                                      token=token))
    except Exception as err:  # offline without a cached copy, a typo, no access
        raise FileNotFoundError(f"could not get the Hub dataset {repo_id}: "
                                f"{type(err).__name__}: {err}") from err


def _load_local(folder: Path, split: str):
    import datasets

    if not folder.is_dir():
        raise FileNotFoundError(f"not a folder: {folder}")
    if (folder / "state.json").is_file() or (folder / "dataset_dict.json").is_file():
        loaded = datasets.load_from_disk(str(folder))
        return _complete(_pick_split(loaded, split, folder))
    if (folder / METADATA).is_file():
        return _from_metadata(folder)
    parquet = sorted(folder.rglob("*.parquet"))
    if parquet:
        files = [str(p) for p in parquet if split in p.name or split in p.parent.name] or \
            [str(p) for p in parquet]
        loaded = datasets.load_dataset("parquet", data_files=files, split="train")
        return _complete(loaded)
    raise FileNotFoundError(
        f"{folder} holds no pool: expected {METADATA} (a pool folder), a save_to_disk "
        "folder, or Parquet files")


def _pick_split(loaded, split: str, where: Path):
    import datasets

    if isinstance(loaded, datasets.DatasetDict):
        if split not in loaded:
            raise InputError(f"{where} has no split {split!r} (it has {list(loaded)})")
        return loaded[split]
    return loaded


def _from_metadata(folder: Path):
    """A pool folder: ``metadata.jsonl`` rows, images and sources read relative to it."""

    rows = []
    with open(folder / METADATA, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as err:
                raise PoolValidationError([f"{METADATA} line {number} is not JSON: {err}"],
                                          str(folder)) from err
            file_name = row.pop("file_name", None)
            if file_name is None:
                raise PoolValidationError([f"{METADATA} line {number} has no file_name"],
                                          str(folder))
            image_path = folder / file_name
            row["image"] = {"bytes": image_path.read_bytes() if image_path.is_file() else None,
                            "path": None}
            if not row.get("sketch") and row.get("source_file"):
                source = folder / row["source_file"]
                if source.is_file():
                    row["sketch"] = source.read_text(encoding="utf-8")
            row.setdefault("id", Path(file_name).stem)
            rows.append(row)
    return _rows_to_dataset(rows)


def _rows_to_dataset(rows: list[dict[str, Any]]):
    import datasets

    feats = features()
    extras = sorted({k for r in rows for k in r} - set(COLUMNS))
    for name in extras:
        kinds = {type(r[name]).__name__ for r in rows if r.get(name) is not None}
        feats[name] = datasets.Value("float64" if kinds <= {"float", "int"} and kinds else
                                     "string")
    columns: dict[str, list[Any]] = {name: [] for name in feats}
    for row in rows:
        for name in feats:
            value = row.get(name)
            if name in extras and value is not None and feats[name].dtype == "string":
                value = value if isinstance(value, str) else json.dumps(value)
            columns[name].append(value)
    return datasets.Dataset.from_dict(columns, features=feats)


def _complete(dataset):
    """Add the pool columns a foreign dataset lacks (as nulls), in our order."""
    import datasets

    missing = [c for c in COLUMNS if c not in dataset.column_names]
    for name in missing:
        kind = COLUMNS[name]
        if kind == "image":
            continue  # required: validation reports it
        dataset = dataset.add_column(name, [None] * len(dataset),
                                     feature=datasets.Value(kind))
    if "image" in dataset.column_names:
        dataset = dataset.cast_column("image", datasets.Image())
    order = [c for c in COLUMNS if c in dataset.column_names]
    order += [c for c in dataset.column_names if c not in COLUMNS]
    return dataset.select_columns(order)


# ---------------------------------------------------------------- statistics


def pool_stats(dataset) -> dict[str, Any]:
    """Rows, counts per tier, subjects, painters, rounds and paint statistics (per tier)."""
    table = dataset.select_columns([c for c in ("tier", "subject", "painter", "round",
                                                "paint_fraction", "n_shapes", "rated_by")
                                    if c in dataset.column_names]).to_dict()
    tiers = Counter(table.get("tier", []))

    def numbers(values: Iterable[Any]) -> dict[str, float] | None:
        vals = [float(v) for v in values if v is not None]
        if not vals:
            return None
        return {"mean": round(mean(vals), 4), "median": round(median(vals), 4),
                "min": round(min(vals), 4), "max": round(max(vals), 4)}

    paint = table.get("paint_fraction", [None] * len(dataset))
    per_tier = {t: numbers(p for p, tt in zip(paint, table.get("tier", [])) if tt == t)
                for t in TIERS}
    return {
        "rows": len(dataset),
        "tiers": {t: tiers.get(t, 0) for t in TIERS} | {t: c for t, c in tiers.items()
                                                         if t not in TIERS},
        "subjects": dict(Counter(v for v in table.get("subject", []) if v).most_common()),
        "painters": dict(Counter(v for v in table.get("painter", []) if v).most_common()),
        "rounds": {str(k): v for k, v in sorted(Counter(
            v for v in table.get("round", []) if v is not None).items())},
        "rated_by": dict(Counter(v for v in table.get("rated_by", []) if v).most_common()),
        "paint_fraction": numbers(paint),
        "paint_fraction_by_tier": per_tier,
        "n_shapes": numbers(table.get("n_shapes", [])),
    }
