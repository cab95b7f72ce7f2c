"""The reference pool: the paintings the pairwise judge compares against.

A pool is a Hugging Face ``datasets`` dataset (:mod:`~watercolour.pool.schema`,
:mod:`~watercolour.pool.dataset`); a starter pool is built offline by the procedural painter
and the offline critic (:mod:`~watercolour.pool.procedural`, :mod:`~watercolour.pool.build`),
tiered by a documented synthetic rule (:mod:`~watercolour.pool.tiers`) until a person rates it
(:mod:`~watercolour.pool.rating`). Real painters and critics are OpenAI-compatible endpoints
(:mod:`~watercolour.pool.painters`, :mod:`~watercolour.pool.critic`).

This package needs only :mod:`watercolour.render`.
"""

from watercolour.pool.build import BuildConfig, BuildResult, build_pool
from watercolour.pool.dataset import load_pool, pool_stats, push_pool, save_pool
from watercolour.pool.schema import TIERS, PoolValidationError, validate

__all__ = [
    "TIERS",
    "BuildConfig",
    "BuildResult",
    "PoolValidationError",
    "build_pool",
    "load_pool",
    "pool_stats",
    "push_pool",
    "save_pool",
    "validate",
]
