"""Every committed result, in one folder that the wheel ships (a chapter on Colab reads them
from the installed package; a checkout reads the same files under ``src/watercolour/results/``).

- ``tiny/<name>/``: the tiny painter's longer runs (curve, analysis, rollout summary, contact
  sheet, final evaluation), published by ``watercolour tiny runs``; and
  ``tiny/*eval*.json``, its policies probed by ``watercolour tiny evaluate``
  (the commands are in those modules' docstrings).
- ``sft/smollm2/``: SmolLM2-135M before and after its supervised warm start on generated
  compact sketches (``eval.json``, ``before.png``, ``after.png``, the run's ``sft.json``), and
  ``sft/smollm2-pool/``: the same model after its warm start on the pool's own sketches;
  written by ``watercolour compare ... --out src/watercolour/results/sft/...``
  (the commands: ``recipes/sft-smollm2.yaml`` and ``docs/training.md``).
- ``smollm2/judge-led/``: SmolLM2-135M's GRPO run from that warm start (curve, analysis,
  rollout summary, contact sheet: ``watercolour publish``) and ``eval.json`` with
  ``before.png`` / ``after.png``, the warm start against the trained policy on the same seeds
  with love-only references (``watercolour compare ... --love-references 4``; the commands:
  ``recipes/smollm2-cpu.yaml`` and ``docs/training.md``); ``smollm2/judge-led-okay-first/``:
  the same with the judge's references from the ``okay`` tier first
  (``--references-schedule linear:0:0.5``), the run chapter 06 shows;
  ``smollm2/judge-led-okay-first-75/``: that run resumed from its step-40 checkpoint to 75
  steps (``run.json``'s ``earlier`` holds the first command line). A run's
  ``analysis.json`` holds its ``yardstick``: the judge's fixed scale.
- ``benchmarks/``: the benchmark records the chapters show, byte-equal copies of the newest
  ``benchmarks/results/<name>`` a benchmark wrote in a checkout (a test keeps them equal).

Each folder's records carry the configuration that made them.
"""

from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).parent
"""The root of the committed results."""

TINY = RESULTS / "tiny"
"""The tiny painter's committed runs and evaluations."""

SFT = RESULTS / "sft"
"""The supervised warm starts, before and after."""

SMOLLM2 = RESULTS / "smollm2"
"""SmolLM2-135M's committed GRPO runs and their evaluations."""

BENCHMARKS = RESULTS / "benchmarks"
"""The benchmark records the chapters show (copies of ``benchmarks/results/``)."""
