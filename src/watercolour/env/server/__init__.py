"""The server side: :mod:`~watercolour.env.server.environment` (the shared service and the
per-session environment), :mod:`~watercolour.env.server.app` (the FastAPI app) and
:mod:`~watercolour.env.server.guard` (the token, the session limit, bounded input and idle
websockets, in front of it)."""

from importlib import import_module
from typing import Any

_HOMES = {"Service": "environment", "WatercolourEnvironment": "environment",
          "build_app": "app", "create_server_app": "app"}
"""Each public name's module, imported on first use (the environment without the app's
FastAPI stack: what a training episode needs)."""


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_HOMES[name]}"), name)
    globals()[name] = value
    return value


__all__ = ["Service", "WatercolourEnvironment", "build_app", "create_server_app"]
