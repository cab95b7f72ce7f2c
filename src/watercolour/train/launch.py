"""The Hugging Face Jobs launch of a training run: the ``hf jobs uv run`` command, and a recipe
expanded into explicit flags so the job needs no file from a checkout.

``scripts/hf_job_train.py`` (a PEP 723 script with pinned dependencies) calls :func:`main`: on
your machine it starts the job, in the job it is the trainer. With ``--use-vllm`` the job also
installs :data:`VLLM` (``--with``). In the job a failed run exits non-zero (after the last
sync of its metrics and rollouts, :mod:`watercolour.train.sync`), and so does a stopped one
(SIGTERM, as at the job's timeout, is turned into an exit that runs that sync first).
"""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
import traceback
from pathlib import Path

from watercolour.train.config import find_recipe

FLAVOR = "h200"
TIMEOUT = "48h"
SECRETS = "HF_TOKEN"
SCRIPT = "scripts/hf_job_train.py"
VLLM = "vllm==0.30.0"
"""The vLLM a ``--use-vllm`` job installs: the newest release that TRL 1.16 supports (0.22 to
0.31) whose own pins allow torch 2.13.0 and transformers 5.24 (0.31 and 0.32 pin torch 2.13.0
but cap transformers below 5.18 and 5.20; 0.33 on want torch 2.14). The ``vllm`` extra and
constraints.txt say the same."""


def uses_vllm(flags: list[str]) -> bool:
    """Whether the (expanded) flags turn on TRL's ``use_vllm``."""
    from watercolour.train.config import parse_args

    return bool(parse_args(flags)[1].use_vllm)


def launch_command(flags: list[str], source: str | None, script: str = SCRIPT) -> list[str]:
    """The ``hf jobs uv run`` command that runs ``script`` with ``flags`` on an H200 (plus
    ``--with vllm==...`` when the flags ask for ``--use-vllm``)."""
    command = ["hf", "jobs", "uv", "run", script, "--flavor", FLAVOR, "--timeout", TIMEOUT,
               "--secrets", SECRETS]
    if source:
        command += ["--with", source]
    if uses_vllm(flags):
        command += ["--with", VLLM]
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
    return train_in_job(flags or own)


def _stopped(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def train_in_job(flags: list[str]) -> int:
    """``watercolour train FLAGS`` as the job's process: its exit status is the run's (0
    trained, 2 bad input, 1 any failure, with its traceback, 128+N stopped by signal N), and
    SIGTERM unwinds like an exception so the last sync still runs."""
    from watercolour.train.program import main as watercolour_train

    try:
        previous = signal.signal(signal.SIGTERM, _stopped)
    except ValueError:  # not the main thread: leave signals alone
        previous = None
    try:
        return watercolour_train(flags)
    except SystemExit as stop:
        code = stop.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except Exception:
        traceback.print_exc()
        print("watercolour train: the run failed (see above)", file=sys.stderr)
        return 1
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
