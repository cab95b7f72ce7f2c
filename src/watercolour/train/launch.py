"""The Hugging Face Jobs launch of a training run: the ``hf jobs uv run`` command, and a recipe
expanded into explicit flags so the job needs no file from a checkout.

``scripts/hf_job_train.py`` (a PEP 723 script with pinned dependencies) calls :func:`main`: on
your machine it starts the job, in the job it is the trainer.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

from watercolour.train.config import find_recipe

FLAVOR = "h200"
TIMEOUT = "48h"
SECRETS = "HF_TOKEN"
SCRIPT = "scripts/hf_job_train.py"


def launch_command(flags: list[str], source: str | None, script: str = SCRIPT) -> list[str]:
    """The ``hf jobs uv run`` command that runs ``script`` with ``flags`` on an H200."""
    command = ["hf", "jobs", "uv", "run", script, "--flavor", FLAVOR, "--timeout", TIMEOUT,
               "--secrets", SECRETS]
    if source:
        command += ["--with", source]
    return [*command, "--", *flags]


def expand_recipe(flags: list[str]) -> list[str]:
    """``--config RECIPE`` -> the recipe's settings as explicit flags (before the other
    flags, which still override them), so the job needs no file from this checkout."""
    if "--config" not in flags:
        return list(flags)
    import yaml

    i = flags.index("--config")
    recipe = yaml.safe_load(find_recipe(flags[i + 1]).read_text(encoding="utf-8")) or {}
    expanded: list[str] = []
    for key, value in recipe.items():
        if isinstance(value, dict):
            value = json.dumps(value)
        values = value if isinstance(value, list) else [value]
        expanded += [f"--{key}", *(str(v).lower() if isinstance(v, bool) else str(v)
                                   for v in values)]
    return expanded + flags[:i] + flags[i + 2:]


def main(argv: list[str], script: str | Path = SCRIPT) -> int:
    """``[--launch | --print] [--source SPEC] -- FLAGS`` starts (or prints) the job; without
    ``--launch``/``--print`` it trains here with ``FLAGS`` (what the job itself runs)."""
    args = list(argv)
    flags = args[args.index("--") + 1:] if "--" in args else []
    own = args[:args.index("--")] if "--" in args else args
    if "--launch" in own or "--print" in own:
        source = None
        if "--source" in own:
            source = own[own.index("--source") + 1]
        command = launch_command(expand_recipe(flags), source, str(script))
        if "--print" in own:
            print(shlex.join(command))
            return 0
        return subprocess.call(command)
    from watercolour.cli import main as watercolour

    return watercolour(["train", *(flags or own)])
