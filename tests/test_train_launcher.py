"""The Hugging Face Jobs launcher: the exact ``hf jobs uv run`` command, inline pinned
dependencies that agree with the project's pins, and the same flags reaching the trainer."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts/hf_job_train.py"


def _inline_dependencies() -> list[str]:
    block = re.search(r"^# /// script\n(.*?)^# ///$", SCRIPT.read_text(), re.S | re.M)
    assert block, "no PEP 723 block"
    meta = tomllib.loads("\n".join(line[2:] for line in block.group(1).splitlines()))
    return meta["dependencies"]


def test_inline_dependencies_are_pinned_like_the_project():
    deps = _inline_dependencies()
    assert all("==" in d for d in deps), deps
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = {}
    for d in project["dependencies"] + [x for group in project["optional-dependencies"].values()
                                        for x in group]:
        name, _, version = d.partition("==")
        pins[re.sub(r"\[.*\]", "", name).lower()] = version
    for d in deps:
        name, _, version = d.partition("==")
        if name in pins:
            assert pins[name] == version, d
    assert {"trl", "peft", "transformers", "torch", "trackio"} <= {d.split("==")[0] for d in deps}


def test_launch_command_is_the_published_one():
    out = subprocess.run([sys.executable, str(SCRIPT), "--print", "--source",
                          "watercolour[train] @ git+https://example.org/w.git", "--",
                          "--config", "recipes/full-35b.yaml", "--out", "me/watercolour-grpo"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    command = shlex.split(out.stdout)
    assert command[:12] == ["hf", "jobs", "uv", "run", str(SCRIPT), "--flavor", "h200",
                            "--timeout", "48h", "--secrets", "HF_TOKEN", "--with"]
    assert command[12] == "watercolour[train] @ git+https://example.org/w.git"
    flags = command[command.index("--") + 1:]
    assert flags[-2:] == ["--out", "me/watercolour-grpo"]  # the command line still wins
    assert "--config" not in flags  # the recipe travels as flags: the job needs no file
    # ... and those flags mean exactly the recipe
    from watercolour.train.config import parse_args

    from_flags = parse_args(flags)
    from_recipe = parse_args(["--config", str(ROOT / "src/watercolour/recipes/full-35b.yaml"), "--out",
                              "me/watercolour-grpo"])
    assert from_flags[0] == from_recipe[0]
    assert from_flags[1].to_dict() == from_recipe[1].to_dict()


def test_in_the_job_the_flags_reach_the_trainer(capsys):
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import hf_job_train
    finally:
        sys.path.pop(0)
    code = hf_job_train.main(["--", "--config", str(ROOT / "src/watercolour/recipes/full-35b.yaml"),
                              "--dry-run", "--json"])
    assert code == 0
    printed = capsys.readouterr().out
    assert '"layers_adapted": 40' in printed and '"max_steps": 110' in printed


def test_use_vllm_adds_the_pinned_vllm_to_the_job():
    from packaging.requirements import Requirement

    from watercolour.train.launch import VLLM, expand_recipe, launch_command

    full = expand_recipe(["--config", "full-35b", "--out", "me/watercolour-grpo"])
    assert VLLM not in launch_command(full, None)
    command = launch_command([*full, "--use-vllm"], "watercolour[train]")
    assert command[command.index("--") - 2:command.index("--")] == ["--with", VLLM]
    assert VLLM not in launch_command([*full, "--use_vllm", "false"], None)
    # the job's vLLM is the constraints' pin, inside the vllm extra's range
    pins = dict(line.split("#")[0].strip().split("==")
                for line in (ROOT / "constraints.txt").read_text().splitlines()
                if line.split("#")[0].strip())
    assert VLLM.split("==") == ["vllm", pins["vllm"]]
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]["vllm"]
    assert Requirement(extra[0]).specifier.contains(pins["vllm"])
    # TRL's supported range: 0.22 to 0.31
    from packaging.version import Version

    assert Version("0.22") <= Version(pins["vllm"]) <= Version("0.31")


def test_in_the_job_bad_input_is_one_line_and_exit_2(capsys, monkeypatch):
    """The job runs the training program itself (watercolour.train.program, not the CLI)."""
    from watercolour.train.launch import train_in_job

    monkeypatch.setenv("WATERCOLOUR_RENDER_WORKERS", "0")
    assert train_in_job(["--dry-run"]) == 2
    assert capsys.readouterr().err.strip() == \
        "watercolour train: error: WATERCOLOUR_RENDER_WORKERS must be positive, got '0'"
