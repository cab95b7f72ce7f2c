# /// script
# requires-python = ">=3.10"
# dependencies = [
#     "torch==2.13.0",
#     "transformers==5.24.0",
#     "trl==1.16.0",
#     "peft==0.21.2",
#     "accelerate==1.15.0",
#     "datasets==5.2.0",
#     "huggingface-hub==2.4.0",
#     "trackio==0.43.0",
#     "openenv==0.10.0",
# ]
# ///
"""The full run as a Hugging Face Job: one H200, 48 hours, the published command.

On your machine (``hf auth login`` first):

    python scripts/hf_job_train.py --launch --source 'watercolour[train] @ git+https://...' \\
        -- --config recipes/full-35b.yaml --env-url https://YOU-watercolour-env.hf.space \\
           --out YOU/watercolour-grpo

runs ``hf jobs uv run scripts/hf_job_train.py --flavor h200 --timeout 48h --secrets HF_TOKEN
--with SOURCE -- <flags>`` (``--print`` shows that command instead). In the job, uv installs
the pinned dependencies above (and ``--with`` the watercolour package itself), and this same
file runs ``watercolour train <flags>``: the reward comes from the environment server
(``--env-url``), so the job needs no browser. A ``--config RECIPE.yaml`` is expanded here
into explicit flags, so the job needs no file from this checkout.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

FLAVOR = "h200"
TIMEOUT = "48h"
SECRETS = "HF_TOKEN"
HERE = Path(__file__).resolve()


def launch_command(flags: list[str], source: str | None, script: str = str(HERE)) -> list[str]:
    """The ``hf jobs uv run`` command that runs this script with ``flags`` on an H200."""
    command = ["hf", "jobs", "uv", "run", script, "--flavor", FLAVOR, "--timeout", TIMEOUT,
               "--secrets", SECRETS]
    if source:
        command += ["--with", source]
    return [*command, "--", *flags]


def expand_recipe(flags: list[str]) -> list[str]:
    """``--config RECIPE.yaml`` -> the recipe's settings as explicit flags (before the other
    flags, which still override them), so the job needs no file from this checkout."""
    if "--config" not in flags:
        return list(flags)
    import json

    import yaml

    i = flags.index("--config")
    recipe = yaml.safe_load(Path(flags[i + 1]).read_text(encoding="utf-8")) or {}
    expanded: list[str] = []
    for key, value in recipe.items():
        if isinstance(value, dict):
            value = json.dumps(value)
        values = value if isinstance(value, list) else [value]
        expanded += [f"--{key}", *(str(v).lower() if isinstance(v, bool) else str(v)
                                   for v in values)]
    return expanded + flags[:i] + flags[i + 2:]


def main(argv: list[str]) -> int:
    args = list(argv)
    flags = args[args.index("--") + 1:] if "--" in args else []
    own = args[:args.index("--")] if "--" in args else args
    if "--launch" in own or "--print" in own:
        source = None
        if "--source" in own:
            source = own[own.index("--source") + 1]
        command = launch_command(expand_recipe(flags), source)
        if "--print" in own:
            print(shlex.join(command))
            return 0
        return subprocess.call(command)
    from watercolour.cli import main as watercolour

    return watercolour(["train", *(flags or own)])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
