"""The server's configuration: the reward's ``WATERCOLOUR_*`` variables (the mix, the pool,
judge and HPS endpoints, the gate mode: :class:`watercolour.rewards.RewardConfig`), the
renderer's (:class:`watercolour.render.RenderConfig`), and the server's own, each declared once
on its field and read by :mod:`watercolour.settings`; every mistake is reported at start, one
line each (:class:`EnvConfigError`).

=================================  ====================================================
variable                           meaning (default)
=================================  ====================================================
``WATERCOLOUR_RENDER_WORKERS``     browsers, renders in parallel (RenderConfig's; the
                                   server's default when unset: one per two cores)
``WATERCOLOUR_RENDER_DEADLINE``    seconds per render (RenderConfig's, 30); also
                                   ``WATERCOLOUR_CHROMIUM`` and ``WATERCOLOUR_GL``
``WATERCOLOUR_ENV_MAX_SESSIONS``   concurrent sessions; one more gets a clear error (8)
``WATERCOLOUR_ENV_MAX_TURNS``      the most turns an episode may ask for (4)
``WATERCOLOUR_ENV_REGRESSION_PENALTY``  what a multi-turn episode's reward loses per unit
                                   its last turn falls below its best earlier turn, at
                                   most 1 (0: the episode's reward is the last turn's)
``WATERCOLOUR_ENV_RENDER_CACHE``   renders kept (same sketch and seed: rendered once);
                                   0: off (256)
``WATERCOLOUR_ENV_TOKEN``          the bearer token every route but ``/health`` requires
                                   (``Authorization: Bearer ...``); needed to bind beyond
                                   the loopback (unset: no check)
``WATERCOLOUR_ENV_ANONYMOUS``      serve beyond the loopback without a token, behind a
                                   proxy that authenticates (a private Space) (false)
``WATERCOLOUR_ENV_IDLE_TIMEOUT``   seconds a websocket may wait between messages before it
                                   is closed and its session freed (600)
``WATERCOLOUR_ENV_BODY_TIMEOUT``   seconds an HTTP request body may take to arrive, in all
                                   (30)
``WATERCOLOUR_ENV_BODY_MIN_RATE``  bytes a second an HTTP request body must average after
                                   its first second (1024)
=================================  ====================================================

The episode's reward parameters are the server's alone: a reset cannot change them. The
improvement bonus is gone (it paid a deliberately weak first turn):
``WATERCOLOUR_ENV_IMPROVEMENT_BONUS`` and ``WATERCOLOUR_ENV_IMPROVEMENT_FLOOR`` are refused
with a message that says so (:data:`REMOVED`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from watercolour import settings
from watercolour.errors import InputError
from watercolour.render import RenderConfig
from watercolour.rewards import RewardConfig
from watercolour.settings import setting


class EnvConfigError(InputError):
    """The configuration is wrong: one line per mistake."""


REMOVED = {
    "WATERCOLOUR_ENV_IMPROVEMENT_BONUS": "an improvement bonus paid a deliberately weak first "
    "turn; the episode's reward is now the last turn's, less "
    "WATERCOLOUR_ENV_REGRESSION_PENALTY for a revision that made it worse (unset it)",
    "WATERCOLOUR_ENV_IMPROVEMENT_FLOOR": "it measured the improvement bonus, which is gone "
    "(see WATERCOLOUR_ENV_REGRESSION_PENALTY; unset it)",
}
"""Variables this server no longer reads, and why: setting one stops it at start rather than
running a reward its owner did not ask for."""


def default_browsers() -> int:
    """One browser per two cores: a render keeps two cores busy."""
    return max(1, (os.cpu_count() or 2) // 2)


def server_render(environ: Mapping[str, str] | None = None) -> RenderConfig:
    """:class:`RenderConfig` from its own variables, except that a server whose
    ``workers`` variable is unset gets :func:`default_browsers` (the library's default is one
    browser: a notebook shares the machine; a server owns it)."""
    values = settings.env_values(RenderConfig, environ)
    values.setdefault("workers", default_browsers())
    return RenderConfig(**values)


@dataclass
class EnvConfig:
    """Everything the server needs (see the module docstring for the variables)."""

    reward: RewardConfig = setting(default_factory=RewardConfig, reader=RewardConfig.from_env,
                                   help="the reward (RewardConfig's variables)")
    render: RenderConfig = setting(default_factory=server_render, reader=server_render,
                                   help="the browsers (RenderConfig's variables; workers "
                                   "default to one per two cores)")
    max_sessions: int = setting(8, env="WATERCOLOUR_ENV_MAX_SESSIONS", positive=True,
                                help="concurrent sessions; one more gets a clear error")
    max_turns: int = setting(4, env="WATERCOLOUR_ENV_MAX_TURNS", positive=True,
                             help="the most turns (steps) an episode may ask for")
    regression_penalty: float = setting(
        0.0, env="WATERCOLOUR_ENV_REGRESSION_PENALTY", minimum=0.0,
        help="what a multi-turn episode's reward loses per unit its last turn falls below its "
        "best earlier turn (at most 1); 0: the episode's reward is the last turn's. Nothing "
        "is ever added, so a weak first turn gains nothing")
    render_cache: int = setting(256, env="WATERCOLOUR_ENV_RENDER_CACHE", minimum=0,
                                help="renders kept (same sketch and seed: rendered once); 0: off")
    token: str | None = setting(None, env="WATERCOLOUR_ENV_TOKEN",
                                help="the bearer token every route but /health requires "
                                "(Authorization: Bearer ...); needed to bind beyond the "
                                "loopback; unset: no check")
    anonymous: bool = setting(False, env="WATERCOLOUR_ENV_ANONYMOUS",
                              help="serve beyond the loopback without a token (only behind a "
                              "proxy that authenticates, such as a private Space)")
    idle_timeout: float = setting(600.0, env="WATERCOLOUR_ENV_IDLE_TIMEOUT", positive=True,
                                  help="seconds a websocket may wait between messages before "
                                  "it is closed and its session freed (longer than the "
                                  "slowest step)")
    body_timeout: float = setting(30.0, env="WATERCOLOUR_ENV_BODY_TIMEOUT", positive=True,
                                  help="seconds an HTTP request body may take to arrive, in "
                                  "all; a slower one is answered 408 (no session slot is held "
                                  "while a body arrives)")
    body_min_rate: float = setting(1024.0, env="WATERCOLOUR_ENV_BODY_MIN_RATE", minimum=0.0,
                                   help="bytes a second an HTTP request body must average "
                                   "after its first second; a slower one is answered 408 "
                                   "(0: only the total time)")

    def __post_init__(self) -> None:
        try:
            settings.check(self)
        except InputError as err:
            raise EnvConfigError(str(err)) from None
        if self.regression_penalty > 1:
            raise EnvConfigError(f"{variable('regression_penalty')} must be at most 1, got "
                                 f"{self.regression_penalty}")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> EnvConfig:
        """Defaults, then the variables, then explicit (non-None) overrides. Every mistake (the
        reward's, the renderer's, the server's) is reported at once, one line each
        (:class:`EnvConfigError`), a removed variable (:data:`REMOVED`) among them."""
        removed = [f"{name} was removed: {why}" for name, why in REMOVED.items()
                   if ((os.environ if environ is None else environ).get(name) or "").strip()]
        try:
            config = settings.from_env(cls, environ, **overrides)
        except InputError as err:  # one mistake keeps its class in settings: say it is ours
            raise EnvConfigError("\n".join([*removed, str(err)])) from None
        if removed:
            raise EnvConfigError("\n".join(removed))
        return config

    @classmethod
    def declared_variables(cls) -> list[tuple[str, str, str, str]]:
        """The removed variables (:data:`REMOVED`), for :func:`watercolour.settings.variables`:
        setting one is an error that says why."""
        return [(name, "EnvConfig (removed)", "—", f"removed: {why}")
                for name, why in REMOVED.items()]

    def resolved(self) -> dict[str, Any]:
        """Plain data, for /stats (to a caller with the token) and the logs; never the token
        itself, only whether there is one."""
        render = asdict(self.render)
        return {"reward": self.reward.resolved(), "render": render,
                "max_sessions": self.max_sessions, "max_turns": self.max_turns,
                "regression_penalty": self.regression_penalty,
                "render_cache": self.render_cache, "token": self.token is not None,
                "anonymous": self.anonymous, "idle_timeout_s": self.idle_timeout,
                "body_timeout_s": self.body_timeout, "body_min_rate": self.body_min_rate}


def variable(name: str) -> str:
    """The environment variable of :class:`EnvConfig`'s field ``name`` (declared once, on the
    field; read without building the field's default), e.g. ``variable("token")`` for
    clients, which send the same token."""
    field = next(f for f in fields(EnvConfig) if f.name == name)
    return settings._meta(field)["env"]
