"""Curves, tables and galleries: the analysis of a training run.

- :func:`analyse` — a curve CSV (and the run's rollouts) -> :class:`Analysis` (thirds, findings,
  notes on what was skipped); the CLI verb ``watercolour analyse`` prints it.
- :func:`read_curve`, :func:`published_curve` — per-step curves, including the reproduction's
  two published ones shipped in ``analysis/data/`` (BSD-3-Clause).
- :func:`read_rollouts` — a rollouts dataset (JSONL or a ``datasets`` folder);
  :func:`reward_breakdown` — one rollout's reward term by term (raw, weight, contribution).
- :mod:`~watercolour.analysis.plots` — figures of a curve; :mod:`~.gallery` — rendered sketches;
  :func:`write_rollout_gallery` — a static, sortable, offline HTML page of a run's rollouts;
  :class:`RolloutBrowser` — the same rollouts in ipywidgets (sort, filter, the group beside).
- :mod:`~watercolour.analysis.redteam` — sketches that try to game the reward and a search over
  them (``benchmarks/reward_robustness.py`` runs it; chapter 05 shows its gamed sketches).
"""

from watercolour.analysis.curves import COMPONENTS, PUBLISHED, published_curve, read_curve
from watercolour.analysis.findings import BAD, curve_findings, rollout_findings
from watercolour.analysis.report import Analysis, analyse
from watercolour.analysis.rollout_browser import RolloutBrowser
from watercolour.analysis.rollout_gallery import write_rollout_gallery
from watercolour.analysis.rollouts import read_rollouts, reward_breakdown
from watercolour.analysis.thirds import slope_t, third_of_steps, thirds_means

__all__ = ["BAD", "COMPONENTS", "PUBLISHED", "Analysis", "RolloutBrowser", "analyse",
           "curve_findings", "published_curve", "read_curve", "read_rollouts",
           "reward_breakdown", "rollout_findings", "slope_t", "third_of_steps", "thirds_means",
           "write_rollout_gallery"]
