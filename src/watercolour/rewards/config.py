"""Reward configuration: defaults that run here, ``WATERCOLOUR_*`` variables for the rest.

====================================  ==================================================
variable                              meaning (default)
====================================  ==================================================
``WATERCOLOUR_JUDGE_WEIGHT``          judge weight (with the next one; default judge-led)
``WATERCOLOUR_HPS_WEIGHT``            HPS weight
``WATERCOLOUR_POOL``                  the pool (folder, build folder or Hub id;
                                      default ``runs/pool`` when it exists)
``WATERCOLOUR_REFERENCES``            references per group (4)
``WATERCOLOUR_JUDGE``                 ``auto`` | ``pool-fitted`` | ``openai`` (auto: openai
                                      when a base URL or provider is set)
``WATERCOLOUR_JUDGE_MODEL``           the judge's model (Qwen/Qwen3-VL-30B-A3B-Instruct)
``WATERCOLOUR_JUDGE_BASE_URL``        an OpenAI-compatible ``/v1`` endpoint
``WATERCOLOUR_JUDGE_PROVIDER``        an Inference Provider (``auto``, ``novita``, ...)
``WATERCOLOUR_JUDGE_TIMEOUT``         seconds per judge request (60)
``WATERCOLOUR_JUDGE_CONCURRENCY``     judge requests in flight (8)
``WATERCOLOUR_HPS_URL``               the HPSv3 service (none: the offline scorer)
``WATERCOLOUR_HPS_TIMEOUT``           seconds per HPS request (60)
``WATERCOLOUR_HPS_RANGE``             ``lo,hi`` or a mapping JSON (HPSv3's 0..10)
``WATERCOLOUR_GATE_MODE``             ``library`` | ``allowlist`` (library)
``WATERCOLOUR_REWARD_SEED``           base seed of the reference draws (0)
====================================  ==================================================
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from watercolour.rewards.hps.mapping import HpsMapping
from watercolour.rewards.judge.openai_judge import DEFAULT_MODEL
from watercolour.rewards.mix import Mix
from watercolour.rewards.references import DEFAULT_REFERENCES

DEFAULT_POOL = "runs/pool"
JUDGES = ("auto", "pool-fitted", "openai")
HPS_PROMPT = "{subject}, a watercolour painting"
"""The caption HPSv3 scores the render against."""


def _get(env: Mapping[str, str], name: str) -> str | None:
    value = (env.get(name) or "").strip()
    return value or None


def _num(env: Mapping[str, str], name: str, default: float, kind=float) -> Any:
    raw = _get(env, name)
    if raw is None:
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise ValueError(f"{name} must be {'an integer' if kind is int else 'a number'}, "
                         f"got {raw!r}") from None
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {raw!r}")
    return value


def _seed(env: Mapping[str, str]) -> int:
    raw = _get(env, "WATERCOLOUR_REWARD_SEED")
    try:
        return int(raw) if raw is not None else 0
    except ValueError:
        raise ValueError(f"WATERCOLOUR_REWARD_SEED must be an integer, got {raw!r}") from None


@dataclass
class RewardConfig:
    """Everything that decides a reward (see the module docstring for the variables)."""

    mix: Mix = field(default_factory=lambda: Mix.preset("judge-led"))
    pool: str | None = None
    references: int = DEFAULT_REFERENCES
    judge: str = "auto"
    judge_model: str = DEFAULT_MODEL
    judge_base_url: str | None = None
    judge_provider: str | None = None
    judge_timeout_s: float = 60.0
    judge_concurrency: int = 8
    hps_url: str | None = None
    hps_timeout_s: float = 60.0
    hps_mapping: HpsMapping = field(default_factory=HpsMapping)
    hps_prompt: str = HPS_PROMPT
    gate_mode: str = "library"
    seed: int = 0

    def __post_init__(self) -> None:
        if self.judge not in JUDGES:
            raise ValueError(f"the judge must be one of {', '.join(JUDGES)}, got {self.judge!r}")
        if self.judge_base_url and self.judge_provider:
            raise ValueError("set WATERCOLOUR_JUDGE_BASE_URL or WATERCOLOUR_JUDGE_PROVIDER, "
                             "not both")
        if self.references < 1:
            raise ValueError(f"references must be at least 1, got {self.references}")
        if self.gate_mode not in ("library", "allowlist"):
            raise ValueError(f"the gate mode must be library or allowlist, got "
                             f"{self.gate_mode!r}")

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
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {
            "mix": Mix.from_env(env),
            "pool": _get(env, "WATERCOLOUR_POOL"),
            "references": _num(env, "WATERCOLOUR_REFERENCES", DEFAULT_REFERENCES, int),
            "judge": _get(env, "WATERCOLOUR_JUDGE") or "auto",
            "judge_model": _get(env, "WATERCOLOUR_JUDGE_MODEL") or DEFAULT_MODEL,
            "judge_base_url": _get(env, "WATERCOLOUR_JUDGE_BASE_URL"),
            "judge_provider": _get(env, "WATERCOLOUR_JUDGE_PROVIDER"),
            "judge_timeout_s": _num(env, "WATERCOLOUR_JUDGE_TIMEOUT", 60.0),
            "judge_concurrency": _num(env, "WATERCOLOUR_JUDGE_CONCURRENCY", 8, int),
            "hps_url": _get(env, "WATERCOLOUR_HPS_URL"),
            "hps_timeout_s": _num(env, "WATERCOLOUR_HPS_TIMEOUT", 60.0),
            "hps_mapping": HpsMapping.from_env(env),
            "gate_mode": _get(env, "WATERCOLOUR_GATE_MODE") or "library",
            "seed": _seed(env),
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

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
        }
