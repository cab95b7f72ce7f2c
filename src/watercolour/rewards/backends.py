"""The reward's backends, chosen from a :class:`~watercolour.rewards.config.RewardConfig`: the
pool of references, the pairwise judge and the preference scorer. The rewarder, the CLI and the
chapters build them here, so the choice is made in one place:

- the judge: :class:`~watercolour.rewards.judge.openai_judge.OpenAIJudge` when a base URL or an
  Inference Provider is configured, else the pool-fitted offline judge (its fit cached in
  ``judge_cache``, ``WATERCOLOUR_JUDGE_CACHE``, per pool content and version);
- the scorer: the HPSv3 service's client when ``hps_url`` is set, else the offline aesthetic
  scorer with bands fitted to the pool's ``love`` tier (its built-in bands without a pool);
- the pool: the configured one (``WATERCOLOUR_POOL``), else ``runs/pool`` when it exists;
  checked at start-up to hold enough references when the judge weighs (:func:`resolve_pool`).
"""

from __future__ import annotations

from watercolour.errors import SetupError
from watercolour.rewards.config import RewardConfig
from watercolour.rewards.hps.base import PreferenceScorer
from watercolour.rewards.judge.base import PairwiseJudge
from watercolour.rewards.references import ReferencePool, draw_references


class RewardSetupError(SetupError):
    """The reward cannot be set up (no pool, a pool too small): raised at start-up."""


def check_pool(config: RewardConfig, pool: ReferencePool | None) -> ReferencePool:
    """``pool`` (or the configured one, loaded), checked to hold ``config.references``.

    Raises:
        RewardSetupError: no pool is configured, it cannot be read, or it is too small.
    """
    if pool is None:
        source = config.pool_source()
        if source is None:
            raise RewardSetupError(
                "the judge needs a pool: set WATERCOLOUR_POOL (or --pool) to a pool "
                "folder, build folder or Hub id; `watercolour pool build` makes a "
                "starter pool in runs/pool")
        try:
            pool = ReferencePool.load(source)
        except (FileNotFoundError, ValueError) as err:
            raise RewardSetupError(f"cannot use the pool {source}: {err}") from err
    try:
        draw_references(pool, 0, config.references)
    except ValueError as err:
        raise RewardSetupError(str(err)) from err
    return pool


def load_pool(config: RewardConfig) -> ReferencePool | None:
    """The configured pool, loaded, or None when none is configured (a mix without the judge
    uses it to bound the scorer and to find near copies).

    Raises:
        RewardSetupError: a pool is configured but cannot be read.
    """
    source = config.pool_source()
    if source is None:
        return None
    try:
        return ReferencePool.load(source)
    except (FileNotFoundError, ValueError) as err:
        raise RewardSetupError(f"cannot use the pool {source}: {err}") from err


def resolve_pool(config: RewardConfig, pool: ReferencePool | None, *, for_judge: bool
                 ) -> ReferencePool | None:
    """The pool a reward uses: ``pool``, else the configured one. The judge requires it and
    enough references in it (:func:`check_pool`); without the judge it may be None, and when
    there is one it bounds the scorer and finds near copies (:func:`load_pool`).

    Raises:
        RewardSetupError: the judge has no usable pool, or a configured pool cannot be read.
    """
    if for_judge:
        return check_pool(config, pool)
    return pool if pool is not None else load_pool(config)


def make_judge(config: RewardConfig, pool: ReferencePool) -> PairwiseJudge:
    """The configured judge (the pool-fitted one is fitted on ``pool`` here)."""
    if config.judge_backend == "openai":
        from watercolour.rewards.judge.openai_judge import OpenAIJudge

        return OpenAIJudge(config.judge_model, base_url=config.judge_base_url,
                           provider=config.judge_provider, timeout_s=config.judge_timeout_s,
                           max_concurrency=config.judge_concurrency)
    from watercolour.rewards.judge.offline_judge import PoolFittedJudge

    return PoolFittedJudge.fit_cached(pool, config.judge_cache or None)


def make_scorer(config: RewardConfig, pool: ReferencePool | None = None) -> PreferenceScorer:
    """The configured preference scorer; the offline one is fitted on ``pool`` when given."""
    if config.hps_url:
        from watercolour.rewards.hps.client import HpsClient

        return HpsClient(config.hps_url, timeout_s=config.hps_timeout_s,
                         mapping=config.hps_mapping)
    from watercolour.rewards.hps.offline import PoolBandedAestheticScorer

    return PoolBandedAestheticScorer.fit(pool) if pool is not None else \
        PoolBandedAestheticScorer()
