"""The server side: :mod:`~watercolour.env.server.environment` (the shared service and the
per-session environment), :mod:`~watercolour.env.server.app` (the FastAPI app) and
:mod:`~watercolour.env.server.guard` (the token, the session limit, bounded input and idle
websockets, in front of it)."""

from watercolour.env.server.app import build_app, create_server_app
from watercolour.env.server.environment import Service, WatercolourEnvironment

__all__ = ["Service", "WatercolourEnvironment", "build_app", "create_server_app"]
