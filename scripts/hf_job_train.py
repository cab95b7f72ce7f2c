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
#     "flash-linear-attention==0.6.0",
#     "fla-core==0.6.0",
# ]
# ///
"""The full run as a Hugging Face Job: one H200, 48 hours, the published command.

On your machine (``hf auth login`` first; the watercolour package installed):

    python scripts/hf_job_train.py --launch --source 'watercolour[train] @ git+https://...' \\
        -- --config full-35b --env-url https://YOU-watercolour-env.hf.space \\
           --out YOU/watercolour-grpo

runs ``hf jobs uv run scripts/hf_job_train.py --flavor h200 --timeout 48h --secrets HF_TOKEN
--with SOURCE -- <flags>`` (``--print`` shows that command instead). In the job, uv installs
the pinned dependencies above (fla's kernels for Qwen3.5's linear-attention layers among
them: the ``gpu`` extra's pins; run.json says which kernel path each layer type took) (and
``--with`` the watercolour package itself), and this same
file runs ``watercolour train <flags>``: the reward comes from the environment server
(``--env-url``), so the job needs no browser. A ``--config RECIPE`` is expanded here into
explicit flags, so the job needs no file from this checkout. With ``--use-vllm`` among the
flags the job also gets ``--with vllm==0.30.0`` (the ``vllm`` extra's pin: TRL 1.16's range,
built for torch 2.13.0).

With ``--push-to-hub`` the repository is current while the job runs (checkpoints as saved,
metrics and rollouts every ``--hub-sync-minutes``); the job exits non-zero when the run fails
(after one last sync) or is stopped, and a new job with ``--resume OWNER/NAME`` goes on from
the last pushed checkpoint. The logic is :mod:`watercolour.train.launch` and
:mod:`watercolour.train.sync`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from watercolour.train.launch import expand_recipe, launch_command, main

__all__ = ["expand_recipe", "launch_command", "main"]

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], script=Path(__file__).resolve()))
