"""Where the pool-fitted judge's fits are kept (:meth:`PoolFittedJudge.fit_cached
<watercolour.rewards.judge.offline_judge.PoolFittedJudge.fit_cached>`): under the project's
cache directory, never the working directory, so that scoring one file from anywhere writes
nothing beside it.

``WATERCOLOUR_JUDGE_CACHE`` names the folder; unset, it is ``judge`` under the project's cache
(:func:`watercolour.cache.cache_root`: ``WATERCOLOUR_CACHE``, else
``$XDG_CACHE_HOME/watercolour``, else ``~/.cache/watercolour``)."""

from __future__ import annotations

from collections.abc import Mapping

from watercolour.cache import cache_root

JUDGE_CACHE_ENV = "WATERCOLOUR_JUDGE_CACHE"
SHOWN = "`$WATERCOLOUR_CACHE/judge`"
"""The default as the docs show it."""


def default_judge_cache(environ: Mapping[str, str] | None = None) -> str:
    """The judge's cache folder when ``WATERCOLOUR_JUDGE_CACHE`` is unset."""
    return str(cache_root(environ) / "judge")


def read_judge_cache(environ: Mapping[str, str]) -> str:
    """``RewardConfig.judge_cache`` from the environment: ``WATERCOLOUR_JUDGE_CACHE``, else
    :func:`default_judge_cache` of the same environment."""
    return (environ.get(JUDGE_CACHE_ENV) or "").strip() or default_judge_cache(environ)
