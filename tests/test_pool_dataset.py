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


# ---------------------------------------------------------------- as a `datasets` dataset


def test_load_dataset_reads_a_pool_folder_as_images(folder, tmp_path, monkeypatch):
    # what `datasets.load_dataset(folder)` and the Hub's viewer see: the card's data_files
    # name the images with their metadata, so the rows are images with tier, subject, ...
    import datasets

    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "dscache"))
    ds = datasets.load_dataset(str(folder), split="train",
                               cache_dir=str(tmp_path / "dscache"))
    assert isinstance(ds.features["image"], datasets.Image)
    assert "file_name" not in ds.column_names
    for column in ("tier", "subject", "sketch", "critique"):
        assert column in ds.column_names
    assert list(ds["id"]) == ["p000", "p001", "p002", "p003", "p004"]
    assert ds[0]["image"].size == (24, 24)
    assert list(ds["tier"]) == ["love", "love", "okay", "okay", "okay"]
    assert ds[1]["subject"] == "a peach hibiscus"
    assert ds[0]["sketch"].startswith("function setup()")
    assert ds[0]["critique"] == "fine"


# ---------------------------------------------------------------- pool push, to a fake Hub


class _FakeHub:
    """Just enough of the Hub's HTTP API for ``create_repo`` + ``upload_folder`` of small
    files (every file a regular git blob): it records the repositories and files it got."""

    def __init__(self) -> None:
        import http.server
        import threading

        self.repos: list[dict] = []
        self.files: dict[str, bytes] = {}
        self.paths: list[str] = []
        self.card_meta: dict | None = None
        hub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _reply(self, payload: dict, status: int = 200) -> None:
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                import base64

                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                hub.paths.append(self.path)
                if self.path == "/api/repos/create":
                    request = json.loads(body)
                    hub.repos.append(request)
                    repo = f"{request['organization']}/{request['name']}"
                    return self._reply({"url": f"{hub.url}/datasets/{repo}"})
                if self.path == "/api/validate-yaml":  # the card's front matter must parse
                    import yaml

                    card = json.loads(body)["content"]
                    hub.card_meta = yaml.safe_load(card.split("---\n")[1])
                    return self._reply({})
                if "/preupload/" in self.path:
                    files = json.loads(body)["files"]
                    return self._reply({"files": [{"path": f["path"], "uploadMode": "regular",
                                                   "shouldIgnore": False} for f in files]})
                if "/commit/" in self.path:
                    repo = self.path.split("/api/datasets/")[1].split("/commit/")[0]
                    for line in body.decode().splitlines():
                        item = json.loads(line)
                        if item["key"] == "file":
                            value = item["value"]
                            hub.files[value["path"]] = base64.b64decode(value["content"])
                    return self._reply({"commitUrl": f"{hub.url}/datasets/{repo}/commit/{'1' * 40}",
                                        "commitOid":
                                        "1" * 40, "pullRequestUrl": None})
                return self._reply({"error": f"not faked: {self.path}"}, 404)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_pool_push_uploads_the_folder_to_the_hub(folder, tmp_path):
    (folder / ".cache").mkdir()
    (folder / ".cache" / "junk").write_text("never uploaded")
    (folder / "notes.txt").write_text("not part of a pool")
    hub = _FakeHub()
    try:
        env = {**os.environ, "HF_TOKEN": "hf_fake", "HF_HUB_DISABLE_TELEMETRY": "1",
               "HF_HOME": str(tmp_path / "hf")}
        cmd = [sys.executable, "-m", "watercolour", "pool", "push", str(folder),
               "someone/my-pool", "--endpoint", hub.url, "--json"]
        dry = subprocess.run([*cmd, "--dry-run"], env=env, capture_output=True, text=True,
                             timeout=120)
        assert dry.returncode == 0, dry.stderr[-2000:]
        planned = json.loads(dry.stdout)
        assert hub.paths == []  # a dry run sends nothing
        assert planned["rows"] == 5 and planned["url"] is None
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        report = json.loads(proc.stdout)
    finally:
        hub.close()
    assert hub.repos == [{"name": "my-pool", "organization": "someone", "visibility": "public",
                          "type": "dataset"}]
    assert report["url"] == f"{hub.url}/datasets/someone/my-pool"
    expected = sorted(["README.md", "metadata.jsonl"]
                      + [f"images/p{i:03d}.png" for i in range(5)]
                      + [f"sources/p{i:03d}.js" for i in range(5)])
    assert sorted(hub.files) == expected == report["files"] == planned["files"]
    for name in expected:
        assert hub.files[name] == (folder / name).read_bytes()
    data_files = hub.card_meta["configs"][0]["data_files"][0]["path"]
    assert data_files == ["metadata.jsonl", "images/*.png"]
    # what was uploaded loads back as the same pool
    copy = tmp_path / "downloaded"
    for name, data in hub.files.items():
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        (copy / name).write_bytes(data)
    assert list(load_pool(copy)["id"]) == list(load_pool(folder)["id"])


def test_pool_push_refuses_a_bad_pool_or_repo(tmp_path):
    bad = rows(2, 2)
    bad[0]["tier"] = "meh"
    folder = write_pool_folder(bad, tmp_path / "bad")
    env = {**os.environ, "HF_TOKEN": "hf_fake", "HF_ENDPOINT": "http://127.0.0.1:9"}
    for args, message in (([str(folder), "someone/pool"], "unknown tier 'meh'"),
                          ([str(folder), "not-a-repo-id"], "owner/name"),
                          ([str(tmp_path / "nowhere"), "someone/pool"], "no pool folder")):
        proc = subprocess.run([sys.executable, "-m", "watercolour", "pool", "push", *args],
                              env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2, proc.stderr[-2000:]
        assert message in proc.stderr and "Traceback" not in proc.stderr
