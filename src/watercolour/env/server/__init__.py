"""The server side: :mod:`~watercolour.env.server.environment` (the shared service and the
per-session environment) and :mod:`~watercolour.env.server.app` (the FastAPI app)."""

from watercolour.env.server.app import build_app, create_server_app
from watercolour.env.server.environment import Service, WatercolourEnvironment

__all__ = ["Service", "WatercolourEnvironment", "build_app", "create_server_app"]
