"""Every committed result, in one folder that the wheel ships (a chapter on Colab reads them
from the installed package; a checkout reads the same files under ``src/watercolour/results/``).

- ``tiny/<name>/``: the tiny painter's longer runs (curve, analysis, rollout summary, contact
  sheet, final evaluation), published by ``python -m watercolour.train.tiny.runs``; and
  ``tiny/*eval*.json``, its policies probed by ``python -m watercolour.train.tiny.evaluate``
  (the commands are in those modules' docstrings).
- ``sft/smollm2/``: SmolLM2-135M before and after its supervised warm start, written by
  ``python -m watercolour.train.sft_eval ... --out src/watercolour/results/sft/smollm2``.
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

BENCHMARKS = RESULTS / "benchmarks"
"""The benchmark records the chapters show (copies of ``benchmarks/results/``)."""
