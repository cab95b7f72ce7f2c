"""The fast path where a GPU trains: fla's kernels in the Job's install line and the gpu extra
(the same pins), and the names TRL pushes to vLLM after merging LoRA, checked against the
pinned vLLM's Qwen3.5 weight loader for both classes (built from the miniatures)."""

from __future__ import annotations

import re
from pathlib import Path

import tomllib
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
FLA = {"flash-linear-attention": "0.6.0", "fla-core": "0.6.0"}


def _pins() -> dict[str, str]:
    lines = (ROOT / "constraints.txt").read_text().splitlines()
    return dict(line.split("==") for line in lines if "==" in line and not line.startswith("#"))


def test_the_jobs_install_line_and_the_gpu_extra_include_fla():
    script = (ROOT / "scripts/hf_job_train.py").read_text()
    block = re.search(r"^# /// script\n(.*?)^# ///$", script, re.S | re.M).group(1)
    deps = tomllib.loads("\n".join(line[2:] for line in block.splitlines()))["dependencies"]
    job = dict(d.split("==") for d in deps)
    pins = _pins()
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]["gpu"]
    ranges = {Requirement(r).name: Requirement(r).specifier for r in extra}
    for name, version in FLA.items():
        assert job[name] == pins[name] == version  # the Job installs the project's pin
        assert ranges[name].contains(version)
    # the Job's torch brings the Triton fla 0.6.0 trains with on Hopper (>= 3.7.1)
    assert job["torch"] == "2.13.0"
