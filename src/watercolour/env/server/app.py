"""The FastAPI app, from OpenEnv's ``create_app``: websocket sessions on ``/ws``, plain HTTP
``/reset`` ``/step`` ``/state`` ``/schema``, ``/health``, plus ``/stats`` (sessions, outcomes,
render cache; the resolved configuration only to a caller with the token) and ``/reward``
(the reward's settings a trainer must share, read-only:
:class:`~watercolour.env.models.RewardSettings`), behind
:class:`~watercolour.env.server.guard.Guard` (the bearer token, one session limit, bounded
bodies and messages, a body-read deadline, idle websockets closed). Errors are short: a
validation error lists where and what, never the input.

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

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from openenv.core.env_server.http_server import create_app
from starlette.exceptions import HTTPException

from watercolour.env.config import EnvConfig
from watercolour.env.models import (
    RewardSettings,
    WatercolourAction,
    WatercolourObservation,
    WatercolourState,
)
from watercolour.env.server.environment import Service, WatercolourEnvironment
from watercolour.env.server.guard import Guard, short, short_errors

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
        # with a token, only its holders get here (the guard): they see the configuration
        return service.stats(config=service.config.token is not None)

    @app.get("/reward", tags=["Environment Info"], response_model=RewardSettings,
             summary="The reward's settings a trainer must share (read-only)")
    def reward() -> RewardSettings:
        # the trainer compares these with its own before it trains (--env-url); GET only
        return service.reward_settings()

    app.add_exception_handler(RequestValidationError, invalid_request)
    app.add_exception_handler(HTTPException, http_error)
    app.add_middleware(Guard, token=service.config.token, slots=service,
                       idle_timeout_s=service.config.idle_timeout,
                       body_timeout_s=service.config.body_timeout,
                       body_min_rate=service.config.body_min_rate,
                       anonymous=service.config.anonymous)
    app.state.service = service
    if owned:
        app.router.on_shutdown.append(service.close)
    return app


async def invalid_request(request: Request, exc: Exception) -> JSONResponse:
    """422 with where and what of each mistake, never the input (FastAPI's default echoes the
    whole body back)."""
    errors = exc.errors() if isinstance(exc, RequestValidationError) else str(exc)
    return JSONResponse({"detail": short_errors(errors)}, status_code=422)


async def http_error(request: Request, exc: Exception) -> JSONResponse:
    """Any HTTP error, short: OpenEnv's own 422 for a bad action carries pydantic's errors
    with their input."""
    assert isinstance(exc, HTTPException)
    if exc.status_code in (204, 304):
        return Response(status_code=exc.status_code, headers=exc.headers)
    detail = exc.detail
    detail = short_errors(detail) if isinstance(detail, list | tuple) else short(detail)
    return JSONResponse({"detail": detail}, status_code=exc.status_code, headers=exc.headers)


def create_server_app() -> FastAPI:
    """uvicorn's ``--factory`` entry: the app configured from the environment."""
    return build_app()


def __getattr__(name: str) -> Any:
    if name == "app":  # `uvicorn watercolour.env.server.app:app`, OpenEnv's manifest
        value = globals()["app"] = create_server_app()
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
