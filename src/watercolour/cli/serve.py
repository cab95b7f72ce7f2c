"""``watercolour serve [--host H] [--port P]``: the environment as an OpenEnv server."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from watercolour.errors import InputError
from watercolour.flags import command, flag

if TYPE_CHECKING:
    from watercolour.env.config import EnvConfig


@dataclass
class ServeFlags:
    """``watercolour serve``'s flags (the server's configuration is its variables:
    :class:`~watercolour.env.config.EnvConfig`)."""

    host: str = flag(default="127.0.0.1",
                     help="interface to bind (default 127.0.0.1; 0.0.0.0 in a container)")
    port: int = flag(type=int, default=8000, help="port (default 8000)")
    log_level: str = flag(default="info", choices=["debug", "info", "warning", "error"],
                          help="log level (info)")


def add_parser(verbs: argparse._SubParsersAction, name: str) -> None:
    command(
        verbs, name, ServeFlags, run,
        help="serve the environment (OpenEnv websocket + HTTP, /health, /stats)",
        description="Serve the environment over OpenEnv: sessions on /ws (reset with a seed "
        "and subject, step with a reply), plain HTTP /reset /step /state /schema, /health and "
        "/stats. Configured by WATERCOLOUR_* variables (the reward mix, WATERCOLOUR_POOL, the "
        "judge and HPS endpoints, WATERCOLOUR_GATE_MODE, WATERCOLOUR_RENDER_WORKERS and "
        "_DEADLINE, WATERCOLOUR_ENV_MAX_SESSIONS, _MAX_TURNS, _RENDER_CACHE, _IDLE_TIMEOUT), "
        "validated before the server listens. Every route but /health needs the bearer token "
        "WATERCOLOUR_ENV_TOKEN when it is set; a --host beyond the loopback needs one (or "
        "WATERCOLOUR_ENV_ANONYMOUS=1 behind a proxy that authenticates).",
    )


def skip_web_interface() -> None:
    """OpenEnv imports Gradio for its optional web UI whenever its server package loads (20 s
    on a loaded 2-core machine); without ``ENABLE_WEB_INTERFACE`` the UI is off, so this
    process does not import it (OpenEnv expects it may be missing)."""
    if os.environ.get("ENABLE_WEB_INTERFACE", "").lower() not in ("1", "true", "yes"):
        sys.modules.setdefault("gradio", None)  # type: ignore[arg-type]


def exposed(host: str, config: EnvConfig) -> None:
    """Refuse (:class:`EnvConfigError`) to bind beyond the loopback without a token, unless
    the configuration says a proxy in front authenticates."""
    from watercolour.env.config import EnvConfigError, variable
    from watercolour.env.server.guard import is_loopback

    if not is_loopback(host) and config.token is None and not config.anonymous:
        raise EnvConfigError(f"--host {host} is beyond the loopback: set {variable('token')} "
                             "(clients send it as Authorization: Bearer), or "
                             f"{variable('anonymous')}=1 behind a proxy that authenticates")


def run(args: argparse.Namespace) -> int:
    skip_web_interface()
    import uvicorn

    from watercolour.env.config import EnvConfig, EnvConfigError
    from watercolour.env.models import MAX_MESSAGE_BYTES
    from watercolour.env.server.app import build_app
    from watercolour.rewards import RewardSetupError

    if not 0 < args.port < 65536:
        raise InputError(f"--port must be between 1 and 65535, got {args.port}")
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(name)s %(message)s")
    try:
        config = EnvConfig.from_env()
        exposed(args.host, config)
        app = build_app(config)
    except (EnvConfigError, RewardSetupError) as err:
        for line in str(err).splitlines():
            print(f"watercolour serve: error: {line}", file=sys.stderr)
        return 2
    print(f"watercolour serve: http://{args.host}:{args.port} ({config.render.workers} "
          f"browser(s), {config.reward.mix.to_dict().get('name')} mix, up to "
          f"{config.max_sessions} sessions)", file=sys.stderr, flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level,
                ws_max_size=MAX_MESSAGE_BYTES)
    return 0
