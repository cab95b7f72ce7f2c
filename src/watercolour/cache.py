"""The project's cache directory (the one declaration of ``WATERCOLOUR_CACHE``): built models
(:mod:`watercolour.models.registry` keeps each in its folder there) and the pool-fitted judge's
fits (:mod:`watercolour.rewards.judge.cache`) live under it, never in the working directory."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from watercolour import settings


def default_cache(environ: Mapping[str, str] | None = None) -> str:
    """``$XDG_CACHE_HOME/watercolour``, else ``~/.cache/watercolour`` (``environ``: default
    the process's)."""
    xdg = ((os.environ if environ is None else environ).get("XDG_CACHE_HOME") or "").strip()
    return str((Path(xdg) if xdg else Path.home() / ".cache").expanduser() / "watercolour")


@dataclass
class ModelCache:
    """Where the models built here are kept (the one declaration of ``WATERCOLOUR_CACHE``)."""

    cache_dir: str = settings.setting(
        default_factory=default_cache, env="WATERCOLOUR_CACHE",
        shown="`$XDG_CACHE_HOME/watercolour`, else `~/.cache/watercolour`",
        help="where built models are kept: the tiny painter's warm starts (one folder per "
        "configuration), the builtin miniatures and tokenizers; and the pool-fitted judge's "
        "fits (judge/, unless WATERCOLOUR_JUDGE_CACHE says otherwise)")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> ModelCache:
        return settings.from_env(cls, environ, **overrides)


def cache_root(environ: Mapping[str, str] | None = None) -> Path:
    """The cache everything built here is kept under: :class:`ModelCache`'s ``cache_dir``
    (``WATERCOLOUR_CACHE``, default ``~/.cache/watercolour``), absolute."""
    given = settings.env_values(ModelCache, environ).get("cache_dir")
    return Path(given or default_cache(environ)).expanduser().absolute()
