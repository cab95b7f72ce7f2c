"""Loading pools: a pool folder, save_to_disk output, Parquet, a build folder, and a Hub id
served from a local Hub cache with the Hub offline (nothing is downloaded)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pool_helpers import rows

from watercolour.pool.dataset import (
    is_hub_id,
    load_pool,
    pool_stats,
    save_pool,
    write_pool_folder,
)
from watercolour.pool.schema import COLUMNS, PoolValidationError, image_bytes, sha256


@pytest.fixture
def folder(tmp_path) -> Path:
    return write_pool_folder(rows(2, 3), tmp_path / "pool")


def test_pool_folder_layout_and_round_trip(folder):
    assert (folder / "metadata.jsonl").is_file()
    assert (folder / "README.md").read_text().startswith("---\n")
    meta = [json.loads(line) for line in (folder / "metadata.jsonl").read_text().splitlines()]
    assert meta[0]["file_name"] == "images/p000.png"
    assert meta[0]["source_file"] == "sources/p000.js"
    assert (folder / meta[0]["source_file"]).read_text().startswith("function setup()")

    ds = load_pool(folder)
    assert ds.column_names[: len(COLUMNS)] == list(COLUMNS)
    assert len(ds) == 5
    assert list(ds["tier"]) == ["love", "love", "okay", "okay", "okay"]
    first = ds[0]
    assert first["image"].size == (24, 24)  # decoded to PIL
    assert first["sha256"] == sha256(rows(2, 3)[0]["png"])
    assert first["round"] == 3 and first["painter"] == "procedural"


def test_rewriting_a_pool_folder_replaces_it(folder):
    write_pool_folder(rows(1, 1), folder)
    assert len(load_pool(folder)) == 2
    assert not list(folder.parent.glob(".pool.*"))  # no temporary folders left behind


def test_save_to_disk_round_trip(folder, tmp_path):
    ds = load_pool(folder)
    saved = save_pool(ds, tmp_path / "saved")
    again = load_pool(saved)
    assert list(again["id"]) == list(ds["id"])
    assert image_bytes(again.cast_column("image", again.features["image"].__class__(
        decode=False))[0]["image"]) == (folder / "images" / "p000.png").read_bytes()


def test_a_build_folder_loads_as_its_pool(folder, tmp_path):
    build = tmp_path / "build"
    build.mkdir()
    shutil.copytree(folder, build / "pool")
    assert len(load_pool(build)) == 5


def test_foreign_pool_with_only_published_columns(tmp_path):
    # the published pool's minimal shape: tier, source_file, image (file_name)
    src = write_pool_folder(rows(1, 2), tmp_path / "full")
    minimal = tmp_path / "minimal"
    (minimal / "images").mkdir(parents=True)
    lines = []
    for line in (src / "metadata.jsonl").read_text().splitlines():
        row = json.loads(line)
        shutil.copy(src / row["file_name"], minimal / row["file_name"])
        lines.append(json.dumps({"file_name": row["file_name"], "tier": row["tier"],
                                 "source_file": row["source_file"], "model": "some-model"}))
    (minimal / "metadata.jsonl").write_text("\n".join(lines) + "\n")
    ds = load_pool(minimal)
    assert len(ds) == 3
    assert list(ds["id"]) == ["p000", "p001", "p002"]  # from the file names
    assert list(ds["painter"]) == [None] * 3
    assert list(ds["model"]) == ["some-model"] * 3  # extra columns are kept
    stats = pool_stats(ds)
    assert stats["tiers"] == {"love": 1, "okay": 2}


def test_validation_happens_on_load(tmp_path):
    bad = rows(2, 2)
    bad[3]["tier"] = "meh"
    folder = write_pool_folder(bad, tmp_path / "bad")
    with pytest.raises(PoolValidationError, match="unknown tier 'meh'"):
        load_pool(folder)
    assert len(load_pool(folder, check=False)) == 4
    (folder / "images" / "p001.png").write_bytes(b"\x89PNG\r\n\x1a\nbroken")
    with pytest.raises(PoolValidationError, match="p001: image is not decodable"):
        load_pool(folder)


def test_missing_sources_are_clear_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a Hub dataset id"):
        load_pool(tmp_path / "nowhere" / "deeper")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="holds no pool"):
        load_pool(empty)
    assert is_hub_id("HuggingEnvs/watercolour-reference-pool")
    assert not is_hub_id("a/b/c") and not is_hub_id("./x")


def test_pool_stats(folder):
    stats = pool_stats(load_pool(folder))
    assert stats["rows"] == 5
    assert stats["tiers"] == {"love": 2, "okay": 3}
    assert stats["subjects"] == {"a red poppy": 3, "a peach hibiscus": 2}
    assert stats["painters"] == {"procedural": 5}
    assert stats["paint_fraction"]["min"] == pytest.approx(0.1)
    assert stats["paint_fraction_by_tier"]["love"]["mean"] == pytest.approx(0.125)
    assert stats["rated_by"] == {"synthetic:test": 5}


# ---------------------------------------------------------------- Hub ids, offline


def _fake_hub_repo(hf_home: Path, repo_id: str, files_from: Path) -> None:
    """Lay ``files_from`` out as a cached snapshot of a Hub dataset repository."""
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = hf_home / "hub" / ("datasets--" + repo_id.replace("/", "--"))
    shutil.copytree(files_from, repo / "snapshots" / commit)
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)


LOAD_BY_ID = (
    "import json, sys\n"
    "from watercolour.pool import load_pool, pool_stats\n"
    "try:\n"
    "    ds = load_pool(sys.argv[1])\n"
    "except FileNotFoundError as err:\n"
    "    print(json.dumps({'error': str(err)})); sys.exit(0)\n"
    "print(json.dumps(pool_stats(ds) | {'ids': list(ds['id'])}))\n"
)


def test_hub_ids_load_from_the_local_cache_offline(folder, tmp_path):
    hf_home = tmp_path / "hf"
    # 1. the published pool's layout (an imagefolder with metadata.jsonl)
    _fake_hub_repo(hf_home, "someone/watercolour-pool", folder)
    # 2. what Dataset.push_to_hub writes: Parquet under data/
    parquet = tmp_path / "parquet"
    (parquet / "data").mkdir(parents=True)
    load_pool(folder).to_parquet(str(parquet / "data" / "train-00000-of-00001.parquet"))
    _fake_hub_repo(hf_home, "someone/pushed-pool", parquet)

    env = {**os.environ, "HF_HOME": str(hf_home), "HF_HUB_OFFLINE": "1",
           "HF_DATASETS_OFFLINE": "1", "HF_DATASETS_CACHE": str(tmp_path / "dscache")}
    for repo_id in ("someone/watercolour-pool", "someone/pushed-pool", "someone/not-cached"):
        proc = subprocess.run([sys.executable, "-c", LOAD_BY_ID, repo_id], env=env,
                              capture_output=True, text=True, timeout=180)
        assert proc.returncode == 0, proc.stderr[-2000:]
        out = json.loads(proc.stdout.strip().splitlines()[-1])
        if repo_id.endswith("not-cached"):
            assert "could not get the Hub dataset someone/not-cached" in out["error"]
        else:
            assert out["rows"] == 5, out
            assert out["tiers"] == {"love": 2, "okay": 3}
            assert out["ids"] == ["p000", "p001", "p002", "p003", "p004"]
