"""The server's configuration: the reward's ``WATERCOLOUR_*`` variables (the mix, the pool,
judge and HPS endpoints, the gate mode: :class:`watercolour.rewards.RewardConfig`) plus these,
all validated at start with one line per mistake.

=================================  ====================================================
variable                           meaning (default)
=================================  ====================================================
``WATERCOLOUR_RENDER_WORKERS``     browsers, renders in parallel (one per two cores)
``WATERCOLOUR_RENDER_DEADLINE``    seconds per render (30)
``WATERCOLOUR_ENV_MAX_SESSIONS``   concurrent sessions; one more gets a clear error (8)
``WATERCOLOUR_ENV_MAX_TURNS``      the most steps an episode may ask for (4)
``WATERCOLOUR_ENV_RENDER_CACHE``   renders kept (same sketch and seed: rendered once) (256)
=================================  ====================================================
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from watercolour.errors import InputError
from watercolour.rewards import RewardConfig


class EnvConfigError(InputError):
    """The configuration is wrong: one line per mistake."""


def default_browsers() -> int:
    """One browser per two cores: a render keeps two cores busy."""
    return max(1, (os.cpu_count() or 2) // 2)


@dataclass
class EnvConfig:
    """Everything the server needs (see the module docstring for the variables)."""

    reward: RewardConfig = field(default_factory=RewardConfig)
    browsers: int = field(default_factory=default_browsers)
    render_deadline_s: float = 30.0
    max_sessions: int = 8
    max_turns: int = 4
    render_cache: int = 256

    def __post_init__(self) -> None:
        errors = self.problems()
        if errors:
            raise EnvConfigError("\n".join(errors))

    def problems(self) -> list[str]:
        out = []
        if self.browsers < 1:
            out.append(f"browsers must be at least 1, got {self.browsers}")
        if self.render_deadline_s <= 0:
            out.append(f"the render deadline must be positive, got {self.render_deadline_s}")
        if self.max_sessions < 1:
            out.append(f"max_sessions must be at least 1, got {self.max_sessions}")
        if self.max_turns < 1:
            out.append(f"max_turns must be at least 1, got {self.max_turns}")
        if self.render_cache < 0:
            out.append(f"render_cache must be 0 (off) or more, got {self.render_cache}")
        return out

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> EnvConfig:
        """Defaults, then the variables, then explicit (non-None) overrides. Every mistake is
        reported at once, one line each (:class:`EnvConfigError`)."""
        env = os.environ if environ is None else environ
        errors: list[str] = []
        values: dict[str, Any] = {}
        try:
            values["reward"] = RewardConfig.from_env(env)
        except ValueError as err:
            errors.append(str(err))
        specs = (("browsers", "WATERCOLOUR_RENDER_WORKERS", int, 1),
                 ("render_deadline_s", "WATERCOLOUR_RENDER_DEADLINE", float, 0.1),
                 ("max_sessions", "WATERCOLOUR_ENV_MAX_SESSIONS", int, 1),
                 ("max_turns", "WATERCOLOUR_ENV_MAX_TURNS", int, 1),
                 ("render_cache", "WATERCOLOUR_ENV_RENDER_CACHE", int, 0))
        for name, variable, kind, least in specs:
            raw = (env.get(variable) or "").strip()
            if not raw:
                continue
            try:
                value = kind(raw)
            except ValueError:
                errors.append(f"{variable} must be {'an integer' if kind is int else 'a number'}"
                              f", got {raw!r}")
                continue
            if value < least:
                errors.append(f"{variable} must be at least {least:g}, got {raw!r}")
                continue
            values[name] = value
        if errors:
            raise EnvConfigError("\n".join(errors))
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    def resolved(self) -> dict[str, Any]:
        """Plain data, for /stats and the logs."""
        return {"reward": self.reward.resolved(), "browsers": self.browsers,
                "render_deadline_s": self.render_deadline_s, "max_sessions": self.max_sessions,
                "max_turns": self.max_turns, "render_cache": self.render_cache}
