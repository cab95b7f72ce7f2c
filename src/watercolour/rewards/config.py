"""Reward configuration: defaults that run here, ``WATERCOLOUR_*`` variables for the rest.

Each field of :class:`RewardConfig` declares its variable, default and help
(:func:`watercolour.settings.setting`); ``settings.variables_table()`` lists them, with every
other ``WATERCOLOUR_*`` variable, as the README's table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from watercolour import settings
from watercolour.gates import MODES, GateConfig
from watercolour.pool.schema import DEFAULT_POOL
from watercolour.rewards.copies import CONFIRM, RENDER_THRESHOLD, SKETCH_THRESHOLD
from watercolour.rewards.hps.mapping import RANGE_ENV, HpsMapping
from watercolour.rewards.judge.cache import JUDGE_CACHE_ENV, default_judge_cache, read_judge_cache
from watercolour.rewards.judge.cache import SHOWN as JUDGE_CACHE_SHOWN
from watercolour.rewards.judge.openai_judge import DEFAULT_MODEL
from watercolour.rewards.mix import Mix
from watercolour.rewards.references import DEFAULT_REFERENCES
from watercolour.settings import SettingError, setting

JUDGES = ("auto", "pool-fitted", "openai")
HPS_PROMPT = "{subject}, a watercolour painting"
"""The caption HPSv3 scores the render against."""


@dataclass
class RewardConfig:
    """Everything that decides a reward (see the module docstring for the variables)."""

    mix: Mix = setting(default_factory=lambda: Mix.preset("judge-led"), reader=Mix.from_env,
                       help="the weights (WATERCOLOUR_JUDGE_WEIGHT, WATERCOLOUR_HPS_WEIGHT)")
    pool: str | None = setting(None, env="WATERCOLOUR_POOL",
                               help="the pool: a folder, a build folder or a Hub dataset "
                               f"id; unset: {DEFAULT_POOL} when it exists")
    references: int = setting(DEFAULT_REFERENCES, env="WATERCOLOUR_REFERENCES", positive=True,
                              help="references per group")
    judge: str = setting("auto", env="WATERCOLOUR_JUDGE", choices=JUDGES,
                         help="the pairwise judge: pool-fitted (offline), openai (a vision "
                         "model behind an OpenAI-compatible endpoint) or auto: openai when a "
                         "base URL or provider is set")
    judge_cache: str | None = setting(
        default_factory=default_judge_cache, env=JUDGE_CACHE_ENV, reader=read_judge_cache,
        shown=JUDGE_CACHE_SHOWN,
        help="folder of fitted pool-fitted judges, keyed by pool and version, under the "
        "project's cache, never the working directory (empty in code: none)")
    judge_model: str = setting(DEFAULT_MODEL, env="WATERCOLOUR_JUDGE_MODEL",
                               help="the judge's vision model")
    judge_base_url: str | None = setting(None, env="WATERCOLOUR_JUDGE_BASE_URL",
                                         help="an OpenAI-compatible /v1 endpoint")
    judge_provider: str | None = setting(None, env="WATERCOLOUR_JUDGE_PROVIDER",
                                         help="an Inference Provider (auto, novita, ...)")
    judge_timeout_s: float = setting(60.0, env="WATERCOLOUR_JUDGE_TIMEOUT", positive=True,
                                     help="seconds per judge request")
    judge_concurrency: int = setting(8, env="WATERCOLOUR_JUDGE_CONCURRENCY", positive=True,
                                     help="judge requests in flight")
    hps_url: str | None = setting(None, env="WATERCOLOUR_HPS_URL",
                                  help="the HPSv3 service; unset: the offline scorer")
    hps_timeout_s: float = setting(60.0, env="WATERCOLOUR_HPS_TIMEOUT", positive=True,
                                   help="seconds per HPS request")
    hps_mapping: HpsMapping = setting(default_factory=HpsMapping, reader=HpsMapping.from_env,
                                      env=RANGE_ENV, shown="`logistic(mu / 4)`",
                                      help="HPSv3's mu -> [0, 1]: lo,hi (the mu mapped to 0.02 "
                                      "and 0.98) or a mapping JSON fitted on a pool (calibrate)")
    hps_prompt: str = setting(HPS_PROMPT, help="the caption HPSv3 scores the render against")
    gate_mode: str = setting(GateConfig.mode, choices=MODES,
                             reader=lambda env: GateConfig.from_env(env).mode,
                             help="library | allowlist (WATERCOLOUR_GATE_MODE)")
    seed: int = setting(0, env="WATERCOLOUR_REWARD_SEED",
                        help="base seed of the reference draws")
    copy_sketch: float = setting(
        SKETCH_THRESHOLD, env="WATERCOLOUR_COPY_SKETCH", positive=True,
        help="share of a pool painting's sketch (8-token shingles) a rollout may contain "
             "before it is a near copy, whose judge and HPS terms are zeroed (above 1: off)")
    copy_render: float = setting(
        RENDER_THRESHOLD, env="WATERCOLOUR_COPY_RENDER", positive=True,
        help="render similarity (whatever way up) to a pool painting's own render at which a "
             "rollout is a near copy (above 1: the render comparisons are off, nothing is "
             "re-rendered)")
    copy_confirm: int = setting(
        CONFIRM, env="WATERCOLOUR_COPY_CONFIRM", minimum=0,
        help="pool paintings a rollout looks like that are re-rendered at its seed and "
             "compared aligned, per rollout at most (0: none; a copy at another seed than "
             "the pool's render then escapes)")

    def __post_init__(self) -> None:
        settings.check(self)  # the rules declared on the fields
        if self.judge_base_url and self.judge_provider:
            raise SettingError("set WATERCOLOUR_JUDGE_BASE_URL or WATERCOLOUR_JUDGE_PROVIDER, "
                               "not both")

    @property
    def judge_backend(self) -> str:
        """``openai`` or ``pool-fitted``, after resolving ``auto``."""
        if self.judge != "auto":
            return self.judge
        return "openai" if (self.judge_base_url or self.judge_provider) else "pool-fitted"

    @property
    def hps_backend(self) -> str:
        return "hpsv3-service" if self.hps_url else "offline-aesthetic"

    def pool_source(self) -> str | None:
        """The configured pool, or ``runs/pool`` when that exists, or None."""
        if self.pool:
            return self.pool
        return DEFAULT_POOL if Path(DEFAULT_POOL).exists() else None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any
                 ) -> RewardConfig:
        """Defaults, then ``WATERCOLOUR_*`` variables, then explicit (non-None) overrides.
        Invalid values raise at once, with the variable's name."""
        return settings.from_env(cls, environ, **overrides)

    def resolved(self) -> dict[str, Any]:
        """Plain data, for the record beside a run's results."""
        return {
            "mix": self.mix.to_dict(), "pool": self.pool_source(),
            "references": self.references, "judge": self.judge_backend,
            "judge_model": self.judge_model if self.judge_backend == "openai" else None,
            "judge_base_url": self.judge_base_url, "judge_provider": self.judge_provider,
            "judge_timeout_s": self.judge_timeout_s,
            "judge_concurrency": self.judge_concurrency,
            "hps": self.hps_backend, "hps_url": self.hps_url,
            "hps_timeout_s": self.hps_timeout_s, "hps_mapping": self.hps_mapping.to_dict(),
            "hps_prompt": self.hps_prompt, "gate_mode": self.gate_mode, "seed": self.seed,
            "copy_sketch": self.copy_sketch, "copy_render": self.copy_render,
            "copy_confirm": self.copy_confirm,
        }
