"""A reader's rehearsal: what someone without this repository does with the published book.

The package is built as a wheel; a fresh virtual environment gets only papermill, ipykernel
and jupytext (from the package index, pip's cache reused); in an empty folder outside the
repository, the chapters 01, 03, 04 and 05 *as published for Colab* (``watercolour book
export``: no outputs, the badge naming itself) are executed with ``package=<the wheel>``, so
each chapter's install cell installs what that chapter imports, from nothing but what Colab
has preinstalled (numpy, pillow, matplotlib at Colab's versions, which it keeps). Chromium is
Debian's, given by ``WATERCOLOUR_CHROMIUM`` (no download here). The GPU chapters' install cells
(06, 07, 09) are checked for what they would install (a dry run in the same environment).

Each chapter's time and the extras its install cell installed are recorded in
``rehearsal.json`` (and in ``$WATERCOLOUR_REHEARSAL_RECORD`` when set).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from watercolour.book import colab
from watercolour.reader.install import LOG_VARIABLE

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.timeout(2700)]

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("WATERCOLOUR_CHROMIUM") or "/usr/lib/chromium/chromium"

# small parameters: the rehearsal is about installing and running, not about the numbers
READER_CHAPTERS = {
    "01_the_medium": {"n_examples": 2},
    "03_environment_and_gates": {"only": ["ok_setup_only.js", "bare_primitives.js",
                                          "no_sketch_refusal.txt"]},
    "04_building_the_pool": {"n_paintings": 4, "rounds": 2, "canvas": 160, "n_grid": 2},
    "05_reward_components": {"n_examples": 1, "consistency_pairs": 2},
}
RESULTS = {"01_the_medium": "runs/book/medium/medium.json",
           "03_environment_and_gates": "runs/book/gates/gates.json",
           "04_building_the_pool": "runs/book/pool/pool.json",
           "05_reward_components": "runs/book/rewards/rewards.json"}
EXPECTED_EXTRAS = {"01_the_medium": ["book"], "03_environment_and_gates": ["book", "env"],
                   "04_building_the_pool": ["book"], "05_reward_components": ["book"]}
GPU_CHAPTERS = {"06_smoke_run": ["book", "train"], "07_full_run": ["book", "train"],
                "09_rollouts": ["book", "train"]}
READER_TOOLS = ["papermill", "ipykernel", "jupytext"]
COLAB_PREINSTALLED = {"numpy": "2.0.2", "pillow": "11.3.0", "matplotlib": "3.10.0"}
"""What Colab has before the first cell (at the time of writing): installing the package must
keep them (pyproject.toml declares ranges that hold them)."""
VERSIONS = ("import importlib.metadata as m, json, sys\n"
            "print(json.dumps({n: m.version(n) for n in sys.argv[1:]}))\n")


def _build_wheel(out: Path) -> Path:
    """The wheel of the committed and working files (no build/ left in the checkout)."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.splitlines()
    source = out / "source"
    for name in files:
        if (ROOT / name).is_file() and not name.startswith(("tests/", "benchmarks/", "js/")):
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                    "--no-build-isolation", "-w", str(out), str(source)], check=True,
                   capture_output=True, text=True)
    (wheel,) = out.glob("watercolour-*.whl")
    return wheel


def _reader_env(venv: Path, log: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "JUPYTER_PATH",
                        "JUPYTER_DATA_DIR", "WATERCOLOUR_POOL")}
    path = [p for p in env.get("PATH", "").split(os.pathsep)
            if p and not p.startswith(str(ROOT))]
    env["PATH"] = os.pathsep.join([str(venv / "bin"), *path])
    env["WATERCOLOUR_CHROMIUM"] = CHROMIUM
    env[LOG_VARIABLE] = str(log)
    env["OMP_NUM_THREADS"] = "1"
    return env


def test_a_reader_runs_the_published_chapters_from_the_wheel(tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    record: dict = {"chapters": {}, "gpu_chapters": {}}
    t0 = time.perf_counter()
    wheel = _build_wheel(tmp_path / "wheel")
    record["wheel"] = {"name": wheel.name, "seconds": round(time.perf_counter() - t0, 1)}

    t0 = time.perf_counter()
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    colab_like = [f"{name}=={version}" for name, version in COLAB_PREINSTALLED.items()]
    subprocess.run([str(python), "-m", "pip", "install", "-q", *READER_TOOLS, *colab_like],
                   check=True, capture_output=True, text=True)
    record["reader_tools"] = {"packages": READER_TOOLS + colab_like,
                              "seconds": round(time.perf_counter() - t0, 1)}
    probe = subprocess.run([str(python), "-c", "import watercolour"], capture_output=True)
    assert probe.returncode != 0, "the reader's environment starts without watercolour"

    published = colab.export_notebooks(ROOT, tmp_path / "published")
    reader = tmp_path / "reader"  # an empty folder outside the repository
    reader.mkdir()
    log = tmp_path / "installs.jsonl"
    env = _reader_env(venv, log)
    for stem, params in READER_CHAPTERS.items():
        notebook = next(p for p in published if p.stem == stem)
        shutil.copy(notebook, reader / notebook.name)
        args = [str(venv / "bin" / "papermill"), notebook.name, f"executed-{notebook.name}",
                "-k", "python3", "--cwd", str(reader), "-p", "package", str(wheel),
                "--execution-timeout", "900"]
        for name, value in params.items():
            args += ["-y", json.dumps({name: value})]
        t0 = time.perf_counter()
        proc = subprocess.run(args, cwd=reader, env=env, capture_output=True, text=True,
                              timeout=1800)
        seconds = round(time.perf_counter() - t0, 1)
        installs = [json.loads(line) for line in log.read_text().splitlines()] \
            if log.exists() else []
        install = installs[-1] if installs else None
        record["chapters"][stem] = {"seconds": seconds, "parameters": params,
                                    "install": install, "ok": proc.returncode == 0}
        assert proc.returncode == 0, f"{stem} failed:\n{proc.stderr[-3000:]}"
        assert (reader / RESULTS[stem]).is_file(), f"{stem} wrote no {RESULTS[stem]}"
        assert install is not None and install["extras"] == EXPECTED_EXTRAS[stem]
        assert install["browser"] == CHROMIUM and install["browser_commands"] is None
    log.unlink()

    chapters = record["chapters"]
    # the first chapter installs the package with its extras from the wheel; the env extra
    # comes with the chapter that starts the server; the later ones find all they need
    first = chapters["01_the_medium"]["install"]
    assert first["requirement"] == f"watercolour[book] @ {wheel.as_uri()}"
    first_missing = {re.split(r"[<>=!~ ]", m)[0] for m in first["missing"]}
    assert {"jupyter-book", "playwright", "datasets"} <= first_missing
    assert not first_missing & set(COLAB_PREINSTALLED), "Colab's own versions satisfy the ranges"
    kept = subprocess.run([str(python), "-c", VERSIONS, *COLAB_PREINSTALLED], check=True,
                          capture_output=True, text=True).stdout
    assert json.loads(kept) == COLAB_PREINSTALLED, "installing the package replaced them"
    gates = chapters["03_environment_and_gates"]["install"]
    assert gates["requirement"] == f"watercolour[book,env] @ {wheel.as_uri()}"
    assert {re.split(r"[<>=!~ ]", m)[0] for m in gates["missing"]} == {"openenv", "uvicorn"}
    for stem in ("04_building_the_pool", "05_reward_components"):
        assert chapters[stem]["install"]["requirement"] is None, stem
    assert not list(reader.glob("benchmarks")) and not (reader / "_config.yml").exists()

    # the GPU chapters' install cells, as they would run here (a dry run)
    for stem, extras in GPU_CHAPTERS.items():
        notebook = next(p for p in published if p.stem == stem)
        cells = json.loads(notebook.read_text())["cells"]
        cell = next("".join(c["source"]) for c in cells if c["cell_type"] == "code"
                    and "from watercolour.notebooks import install" in "".join(c["source"]))
        call = re.search(r"^install\((.*)\)$", cell, re.M).group(1)
        code = ("import json\nfrom watercolour.reader.install import install\n"
                f"package, mode = {str(wheel)!r}, 'smoke-4b'\n"
                f"r = install({call}, dry_run=True, quiet=True)\n"
                "print(json.dumps(r.__dict__))\n")
        proc = subprocess.run([str(python), "-c", code], env=env, capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        plan = json.loads(proc.stdout.strip().splitlines()[-1])
        record["gpu_chapters"][stem] = {"extras": plan["extras"],
                                        "would_install": plan["requirement"],
                                        "missing": plan["missing"]}
        assert plan["extras"] == extras
        assert plan["requirement"] == f"watercolour[{','.join(extras)}] @ {wheel.as_uri()}"
        assert {"trl", "peft", "transformers"} <= {re.split(r"[<>=!~ \[]", m)[0]
                                                   for m in plan["missing"]}

    record["total_chapter_seconds"] = round(sum(c["seconds"] for c in chapters.values()), 1)
    text = json.dumps(record, indent=2)
    (tmp_path / "rehearsal.json").write_text(text)
    if os.environ.get("WATERCOLOUR_REHEARSAL_RECORD"):
        Path(os.environ["WATERCOLOUR_REHEARSAL_RECORD"]).write_text(text)
    print(text)
