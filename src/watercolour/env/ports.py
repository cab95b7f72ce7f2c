"""A free local port, for a server started on this machine (tests, benchmarks, chapters)."""

from __future__ import annotations

import socket


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port on ``host`` that nothing listens on now (the system picks it; another
    process could take it before the server binds, which on a test machine does not happen)."""
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])
