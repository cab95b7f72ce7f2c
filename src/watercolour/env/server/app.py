"""The FastAPI app, from OpenEnv's ``create_app``: websocket sessions on ``/ws``, plain HTTP
``/reset`` ``/step`` ``/state`` ``/schema``, ``/health``, plus ``/stats`` (sessions, outcomes,
render cache, the resolved configuration).

Run it with ``watercolour serve [--host] [--port]``, or with uvicorn (``app`` is built on
first access, from the environment)::

    uvicorn watercolour.env.server.app:app --port 8000

The configuration is read and validated (every mistake reported, one line each) and the
browsers are started *before* the server listens, so ``/health`` answers only when a step can
be served.
"""

from __future__ import annotations

import functools
from typing import Any

from fastapi import FastAPI
from openenv.core.env_server.http_server import create_app

from watercolour.env.config import EnvConfig
from watercolour.env.models import WatercolourAction, WatercolourObservation, WatercolourState
from watercolour.env.server.environment import Service, WatercolourEnvironment

ENV_NAME = "watercolour"


def build_app(config: EnvConfig | None = None, *, service: Service | None = None) -> FastAPI:
    """The app over a started :class:`Service` (one is started from ``config`` when not
    given; it is closed when the app shuts down)."""
    owned = service is None
    service = service or Service(config or EnvConfig.from_env())
    app = create_app(
        functools.partial(WatercolourEnvironment, service), WatercolourAction,
        WatercolourObservation, env_name=ENV_NAME,
        max_concurrent_envs=service.config.max_sessions, state_cls=WatercolourState)

    @app.get("/stats", tags=["Health"], summary="Sessions, outcomes and the render cache")
    def stats() -> dict[str, Any]:
        return service.stats()

    app.state.service = service
    if owned:
        app.router.on_shutdown.append(service.close)
    return app


def create_server_app() -> FastAPI:
    """uvicorn's ``--factory`` entry: the app configured from the environment."""
    return build_app()


def __getattr__(name: str) -> Any:
    if name == "app":  # `uvicorn watercolour.env.server.app:app`, OpenEnv's manifest
        value = globals()["app"] = create_server_app()
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
