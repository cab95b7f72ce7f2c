"""The server side: :mod:`~watercolour.env.server.environment` (the shared service and the
per-session environment), :mod:`~watercolour.env.server.app` (the FastAPI app) and
:mod:`~watercolour.env.server.guard` (the token, the session limit, bounded input and idle
websockets, in front of it)."""

from watercolour.lazy import lazy_attributes

_HOMES = {"Service": "environment", "WatercolourEnvironment": "environment",
          "build_app": "app", "create_server_app": "app"}
"""Each public name's module, imported on first use: the environment (what a training
episode needs) loads without the app."""


__getattr__ = lazy_attributes(__name__, _HOMES)

__all__ = ["Service", "WatercolourEnvironment", "build_app", "create_server_app"]
