"""Where the pool-fitted judge's fits are kept (:meth:`PoolFittedJudge.fit_cached
<watercolour.rewards.judge.offline_judge.PoolFittedJudge.fit_cached>`): under the project's
cache directory, never the working directory, so that scoring one file from anywhere writes
nothing beside it.

``WATERCOLOUR_JUDGE_CACHE`` names the folder; unset, it is ``judge`` under
``WATERCOLOUR_CACHE`` (the project's cache: :class:`~watercolour.train.tiny.warm_start.
WarmStartConfig`'s ``cache_dir``; unset, ``$XDG_CACHE_HOME/watercolour``, else
``~/.cache/watercolour``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

CACHE_ENV = "WATERCOLOUR_CACHE"
JUDGE_CACHE_ENV = "WATERCOLOUR_JUDGE_CACHE"
SHOWN = "`$WATERCOLOUR_CACHE/judge`"
"""The default as the docs show it."""


def cache_home(environ: Mapping[str, str] | None = None) -> Path:
    """The project's cache directory: ``WATERCOLOUR_CACHE``, else
    ``$XDG_CACHE_HOME/watercolour``, else ``~/.cache/watercolour`` (always absolute)."""
    env = os.environ if environ is None else environ
    given = (env.get(CACHE_ENV) or "").strip()
    if given:
        return Path(given).expanduser().absolute()
    xdg = (env.get("XDG_CACHE_HOME") or "").strip()
    return (Path(xdg) if xdg else Path.home() / ".cache").expanduser().absolute() / "watercolour"


def default_judge_cache(environ: Mapping[str, str] | None = None) -> str:
    """The judge's cache folder when ``WATERCOLOUR_JUDGE_CACHE`` is unset."""
    return str(cache_home(environ) / "judge")


def read_judge_cache(environ: Mapping[str, str]) -> str:
    """``RewardConfig.judge_cache`` from the environment: ``WATERCOLOUR_JUDGE_CACHE``, else
    :func:`default_judge_cache` of the same environment."""
    return (environ.get(JUDGE_CACHE_ENV) or "").strip() or default_judge_cache(environ)
